// rlwb: the command line. Placeholder until the CLI lands.
#include <cstdio>
int main() { std::puts("rlwb: not built yet"); return 1; }
