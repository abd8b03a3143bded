#!/bin/bash
set -uxo pipefail
# synthetic
python -m unittest -v tests.test_ops.TestClamp.test_above tests.test_range.TestRange.test_reversed_range_raises tests.test_ops.TestClamp.test_below tests.test_ops.TestClamp.test_inside tests.test_ops.TestMean.test_mean
