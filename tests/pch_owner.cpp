// The program that precompiles a test folder's headers (tests/CMakeLists.txt); it runs nothing.
int main() { return 0; }
