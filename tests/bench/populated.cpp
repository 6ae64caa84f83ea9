#include "bench/populated.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace ratelab::bench {

std::int64_t residentBytes() {
    long pages = 0, resident = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return static_cast<std::int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

double hugePageShare() {
    std::ifstream smaps("/proc/self/smaps");
    if (!smaps) return -1;
    // Each mapping is a header line, then "Name: value kB" fields, ending with VmFlags.
    std::int64_t sizeKb = 0, hugeKb = 0;
    std::int64_t advisedKb = 0, advisedHugeKb = 0;
    std::string line;
    while (std::getline(smaps, line)) {
        if (line.rfind("Size:", 0) == 0) {
            sizeKb = std::stoll(line.substr(5));
        } else if (line.rfind("AnonHugePages:", 0) == 0) {
            hugeKb = std::stoll(line.substr(14));
        } else if (line.rfind("VmFlags:", 0) == 0) {
            std::istringstream flags(line.substr(8));
            std::string flag;
            while (flags >> flag) {
                if (flag == "hg") {
                    advisedKb += sizeKb;
                    advisedHugeKb += hugeKb;
                    break;
                }
            }
            sizeKb = hugeKb = 0;
        }
    }
    if (advisedKb == 0) return -1;
    return static_cast<double>(advisedHugeKb) / static_cast<double>(advisedKb);
}

}  // namespace ratelab::bench
