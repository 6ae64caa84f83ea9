#pragma once

#include <atomic>
#include <thread>

namespace ratelab::memory {

/// A test-and-test-and-set lock for critical sections of a few dozen nanoseconds. Spins with
/// `pause`, then yields, so that with more threads than cores the holder gets to run
/// (a pure spin loses badly when oversubscribed). Meets BasicLockable.
class SpinLock {
public:
    [[gnu::always_inline]] void lock() {
        if (!locked_.exchange(true, std::memory_order_acquire)) return;  // uncontended: inline
        lockContended();
    }
    bool try_lock() { return !locked_.exchange(true, std::memory_order_acquire); }
    [[gnu::always_inline]] void unlock() { locked_.store(false, std::memory_order_release); }

private:
    [[gnu::noinline]] void lockContended() {
        for (;;) {
            int spins = 0;
            while (locked_.load(std::memory_order_relaxed)) {
                if (++spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
                    __builtin_ia32_pause();
#endif
                } else {
                    std::this_thread::yield();
                }
            }
            if (!locked_.exchange(true, std::memory_order_acquire)) return;
        }
    }

    std::atomic<bool> locked_{false};
};

}  // namespace ratelab::memory
