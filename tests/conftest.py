"""Shared pytest setup.

The tests are the package `tests`, one subpackage per layer of lbs_pz (tests/engine/,
tests/models/, ... tests/cli/) plus tests/core/ and tests/repo/; what they share is the
package tests/helpers/ (`from tests.helpers.engine import ...`). pytest imports each test
module by its package name, with the repository's root on the import path, so no test edits
sys.path; lbs_pz itself is the installed (editable) package.

The rule of every test: a test waits for the event it needs (a log line, a file, a status
code) and asserts outcomes, never a duration, so that it passes on a machine whose cores are
busy with another job; a deadline only tells a hang (tests.helpers.waiting.HANG_SECONDS).
"""

import os

# Ray joins the cluster of the last `ray start` on this machine when given no address
# (ray.cluster_utils.Cluster, which one test starts, records itself as that). Another
# test's or a user's cluster is not the tests' to join: every Ray the tests start without
# an address is a local one of their own.
os.environ["RAY_ADDRESS"] = "local"
