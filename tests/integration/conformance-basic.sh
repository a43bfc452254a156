#!/bin/bash
# The core of libiscsi's conformance suite: INQUIRY, READ CAPACITY, READ
# and WRITE 10/16, TEST UNIT READY, the CmdSN and DataSN checks and the
# residual handling of the READ and WRITE commands.
here=${top_srcdir:-$(dirname "$0")/../..}/tests/integration
exec bash "$here/conformance.sh" \
	SCSI.Inquiry \
	SCSI.ReadCapacity10 \
	SCSI.ReadCapacity16 \
	SCSI.Read10 \
	SCSI.Read16 \
	SCSI.Write10 \
	SCSI.Write16 \
	SCSI.TestUnitReady \
	iSCSI.iSCSIcmdsn \
	iSCSI.iSCSIdatasn \
	iSCSI.iSCSIResiduals.Read10Invalid \
	iSCSI.iSCSIResiduals.Read10Residuals \
	iSCSI.iSCSIResiduals.Read12Residuals \
	iSCSI.iSCSIResiduals.Read16Residuals \
	iSCSI.iSCSIResiduals.Write10Residuals \
	iSCSI.iSCSIResiduals.Write12Residuals \
	iSCSI.iSCSIResiduals.Write16Residuals
