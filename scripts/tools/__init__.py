"""Tools of the build and the tests: the P4 contract reader, the Tofino check, the test summary, p4sim's abuse."""
