// The only source of limpwatch_test_pch, the target that precompiles
// GoogleTest's header for every test (tests/CMakeLists.txt). It holds no
// test: the target exists to compile the header with exactly the flags and
// definitions every test has, no more, which GCC requires of a reused one.
