#include "serve/signals.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <thread>

namespace ratelab::serve {

namespace {

sigset_t serviceSignals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    return set;
}

}  // namespace

bool blockServiceSignals() {
    const sigset_t set = serviceSignals();
    return pthread_sigmask(SIG_BLOCK, &set, nullptr) == 0;
}

int waitForSignals(Sidecar& sidecar) {
    const sigset_t set = serviceSignals();
    const int signals = signalfd(-1, &set, SFD_CLOEXEC);
    const int drained = eventfd(0, EFD_CLOEXEC);
    if (signals < 0 || drained < 0) {
        sidecar.log().write(LogLine("error", "signals_unavailable"));
        return 1;
    }
    std::thread waiter;  // waits for the drain, so that this loop still hears a second signal
    for (;;) {
        pollfd fds[2] = {{signals, POLLIN, 0}, {drained, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (fds[1].revents & POLLIN) break;
        if (!(fds[0].revents & POLLIN)) continue;
        signalfd_siginfo info{};
        if (::read(signals, &info, sizeof info) != sizeof info) continue;
        if (info.ssi_signo == SIGHUP) {
            if (!waiter.joinable()) sidecar.reload("sighup");
            continue;
        }
        const char* name = info.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT";
        if (waiter.joinable()) {
            sidecar.log().write(LogLine("warn", "signal")
                                    .field("signal", name)
                                    .field("action", "cutting the connections left"));
            sidecar.cut();
            continue;
        }
        sidecar.log().write(
            LogLine("info", "signal").field("signal", name).field("action", "drain"));
        sidecar.drain();
        waiter = std::thread([&sidecar, drained] {
            sidecar.wait();
            const std::uint64_t one = 1;
            [[maybe_unused]] ssize_t n = ::write(drained, &one, sizeof one);
        });
    }
    if (waiter.joinable()) waiter.join();
    ::close(signals);
    ::close(drained);
    return 0;
}

}  // namespace ratelab::serve
