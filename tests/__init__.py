"""The test suite, a package: what its modules share is tests.helpers."""
