// Preloaded (LD_PRELOAD) into a test to make it run as on a machine of RATELAB_FAKE_THREADS
// hardware threads: std::thread::hardware_concurrency() asks glibc's get_nprocs(), and a
// preloaded definition answers first. For tests of what must not depend on the machine.

#include <cstdlib>

extern "C" {

int get_nprocs() {
    const char* threads = std::getenv("RATELAB_FAKE_THREADS");
    const int n = threads ? std::atoi(threads) : 0;
    return n > 0 ? n : 1;
}

int get_nprocs_conf() {
    return get_nprocs();
}

}  // extern "C"
