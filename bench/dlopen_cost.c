// dlopen(RTLD_LAZY | RTLD_LOCAL, as Sources/CFFmpeg/loader.c does) of each library named, then exit: what
// loading a set of shared libraries costs a process (bench/start_cost.sh times it with perf stat).
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!dlopen(argv[i], RTLD_LAZY | RTLD_LOCAL)) {
            fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
    }
    return 0;
}
