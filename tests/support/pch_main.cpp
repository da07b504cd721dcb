// The program that owns the test programs' precompiled header (tests/CMakeLists.txt, hr_test_pch): it is
// compiled with the same flags as the tests, which reuse its header; it is never run.
int main() { return 0; }
