#!/bin/bash
# The whole of libiscsi's conformance suite (iscsi-test-cu ALL), each
# suite against the LUN kind it needs: see conformance.sh.
here=${top_srcdir:-$(dirname "$0")/../..}/tests/integration
exec bash "$here/conformance.sh" ALL
