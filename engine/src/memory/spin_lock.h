#pragma once

#include <atomic>
#include <thread>

namespace ratelab::memory {

/// A test-and-test-and-set lock for critical sections of a few dozen nanoseconds. A waiter
/// looks at the lock less and less often (1, 2, 4 ... 128 `pause`s between looks), then yields,
/// so that with more threads than cores the holder gets to run (a pure spin loses badly when
/// oversubscribed). Looking less often matters when one lock is hot: every look takes the
/// lock's cache line from the thread that holds it, which then waits for it to come back on
/// its next lock; a waiter that looks at every `pause` made two threads on one key slower
/// together than one alone. Meets BasicLockable.
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
        int pauses = 1;
        for (;;) {
            while (locked_.load(std::memory_order_relaxed)) {
                if (pauses <= kMaxPauses) {
                    for (int i = 0; i < pauses; ++i)
                        pause();
                    pauses *= 2;
                } else {
                    std::this_thread::yield();
                }
            }
            if (!locked_.exchange(true, std::memory_order_acquire)) return;
        }
    }

    static void pause() {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }

    static constexpr int kMaxPauses = 128;

    std::atomic<bool> locked_{false};
};

}  // namespace ratelab::memory
