#!/bin/bash
# libiscsi's reservation suites with two initiator names: PERSISTENT
# RESERVE IN/OUT (every type, access and ownership rules, preemption) and
# RESERVE(6) with nexus loss, logout and resets.
here=${top_srcdir:-$(dirname "$0")/../..}/tests/integration
exec bash "$here/conformance.sh" \
	SCSI.PrinReadKeys \
	SCSI.PrinServiceactionRange \
	SCSI.PrinReportCapabilities \
	SCSI.ProutRegister \
	SCSI.ProutReserve \
	SCSI.ProutClear \
	SCSI.ProutPreempt \
	SCSI.Reserve6
