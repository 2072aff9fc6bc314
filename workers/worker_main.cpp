// rlwb-worker. Placeholder until the worker server lands.
int main() { return 1; }
