// Access-log replay at production size: 10^7 lines, gzipped, streamed through the default policy
// on one thread, as `ratelab-cli replay` runs it, in combined format and as Caddy's JSON lines.
// Each replay runs in a forked child, so its peak resident set is its own (getrusage of the
// child) and nothing an earlier benchmark freed can flatter it. Baselines in the same run: the
// same files only gunzipped and split into lines (the floor any replay pays), and the JSON lines
// parsed by nlohmann-json's DOM (what the narrow scanner in app/sim/log/format/json_scanner.h
// replaces).
//
// The logs are written at first use into $TMPDIR/ratelab-bench-logs (about 300 MiB of gzip) and
// reused. Run: build/tests/bench/ratelab-bench --benchmark_filter=Replay

#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "bench/default_policy.h"
#include "sim/log/line_reader.h"
#include "sim/log/recorded_traffic.h"
#include "sim/run/scenario_runner.h"

namespace ratelab::bench {
namespace {

constexpr std::int64_t kLines = 10'000'000;

std::string cacheDir() {
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/ratelab-bench-logs";
    std::filesystem::create_directories(dir);
    return dir;
}

// 50,000 clients (one in five IPv6), about 1,000 lines a second for 10^4 s, a few paths and
// user agents; seeded.
std::string makeLog(bool json) {
    const std::string path =
        cacheDir() + (json ? "/caddy-1e7-v2.json.gz" : "/combined-1e7-v2.log.gz");
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && st.st_size > (1 << 20)) return path;
    const std::string partial = path + ".partial";
    gzFile out = gzopen(partial.c_str(), "wb1");
    gzbuffer(out, 1 << 20);
    std::mt19937_64 rng(11);
    static constexpr const char* kPaths[] = {"/api/items", "/api/items/42",  "/login",
                                             "/",          "/static/app.js", "/api/search"};
    static constexpr const char* kAgents[] = {
        "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Safari/605.1.15",
        "curl/8.4.0", "python-requests/2.31.0"};
    static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar"};
    std::string buffer;
    char line[1024];
    const std::int64_t start = 1'709'251'200;  // 2024-03-01T00:00:00Z
    for (std::int64_t i = 0; i < kLines; ++i) {
        const int client = static_cast<int>(rng() % 50'000);
        // One line in 50 is a slow request, written up to 2 s after it started (Apache's %t
        // is the start): out of order by that much. The rest are in order.
        const std::int64_t late = rng() % 50 == 0 ? static_cast<std::int64_t>(rng() % 2000) : 0;
        const std::int64_t ms = i - late;
        const std::int64_t t = start + std::max<std::int64_t>(0, ms) / 1000;
        char address[48];
        if (client % 5 == 0) {
            std::snprintf(address, sizeof address, "2001:db8:%x:%x::%x", client / 256, client % 256,
                          client + 1);
        } else {
            std::snprintf(address, sizeof address, "198.%d.%d.%d", 18 + client / 65536,
                          client / 256 % 256, client % 256);
        }
        const char* p = kPaths[rng() % 6];
        const char* ua = kAgents[rng() % 4];
        const int status = rng() % 50 == 0 ? 404 : 200;
        int n;
        if (json) {
            n = std::snprintf(
                line, sizeof line,
                "{\"level\":\"info\",\"ts\":%lld.%03lld,\"logger\":\"http.log.access.log0\","
                "\"msg\":\"handled request\",\"request\":{\"remote_ip\":\"%s\",\"remote_port\":"
                "\"%d\",\"proto\":\"HTTP/1.1\",\"method\":\"GET\",\"host\":\"example.test\","
                "\"uri\":\"%s?page=%d\",\"headers\":{\"User-Agent\":[\"%s\"],\"Accept\":"
                "[\"*/*\"],\"Accept-Encoding\":[\"gzip, br\"]}},\"bytes_read\":0,\"user_id\":"
                "\"\",\"duration\":0.00%d,\"size\":%d,\"status\":%d,\"resp_headers\":{"
                "\"Content-Type\":[\"application/json\"]}}\n",
                static_cast<long long>(t),
                static_cast<long long>(std::max<std::int64_t>(0, ms) % 1000), address,
                30000 + static_cast<int>(i % 30000), p, static_cast<int>(i % 9), ua,
                static_cast<int>(100 + i % 899), static_cast<int>(200 + i % 5000), status);
        } else {
            const std::int64_t day = (t - start) / 86'400;
            const std::int64_t s = (t - start) % 86'400;
            n = std::snprintf(line, sizeof line,
                              "%s - - [%02lld/%s/2024:%02lld:%02lld:%02lld +0000] \"GET %s?page=%d "
                              "HTTP/1.1\" %d %d \"-\" \"%s\"\n",
                              address, static_cast<long long>(1 + day % 28), kMonths[day / 28 % 3],
                              static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60),
                              static_cast<long long>(s % 60), p, static_cast<int>(i % 9), status,
                              static_cast<int>(200 + i % 5000), ua);
        }
        buffer.append(line, static_cast<std::size_t>(n));
        if (buffer.size() > (1 << 20)) {
            gzwrite(out, buffer.data(), static_cast<unsigned>(buffer.size()));
            buffer.clear();
        }
    }
    gzwrite(out, buffer.data(), static_cast<unsigned>(buffer.size()));
    gzclose(out);
    std::filesystem::rename(partial, path);
    return path;
}

struct ChildResult {
    std::int64_t lines = 0;
    double cpuSeconds = 0;
    double wallSeconds = 0;
    double peakMiB = 0;
    bool ok = false;
};

double cpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Runs `work` (which returns the lines it handled) in a forked child; the child's CPU and wall
// time and its peak resident set come back.
template <typename Work>
ChildResult inChild(Work work) {
    int fds[2];
    if (pipe(fds) != 0) return {};
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        const double cpu0 = cpuSeconds();
        const auto wall0 = std::chrono::steady_clock::now();
        ChildResult r;
        r.lines = work();
        r.cpuSeconds = cpuSeconds() - cpu0;
        r.wallSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        r.ok = r.lines > 0;
        if (write(fds[1], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) _exit(2);
        _exit(0);
    }
    close(fds[1]);
    ChildResult r;
    if (read(fds[0], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) r.ok = false;
    close(fds[0]);
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    r.peakMiB = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) r.ok = false;
    return r;
}

// The whole replay as the CLI runs it: stream, default policy, report totals.
std::int64_t replay(const std::string& path, sim::LogFormat format) {
    sim::ReplayInput input;
    input.files = {path};
    input.format = sim::LogFormatOptions{format, {}, {}};
    sim::LogReading reading;
    auto stream = std::make_shared<sim::LogStream>(input, reading);
    sim::RunnerOptions options;
    options.measureWallTime = false;
    sim::ScenarioRunner runner(
        sim::makeReplayScenario(std::make_shared<sim::StreamedLog>(stream, path), kNanosPerSecond),
        defaultPolicy(), options);
    runner.runToEnd();
    if (reading.error || reading.replayed != kLines) return 0;
    return runner.totals().requests;
}

void report(benchmark::State& state, const ChildResult& r) {
    if (!r.ok) {
        state.SkipWithError("the child failed");
        return;
    }
    state.counters["lines_per_cpu_s"] = static_cast<double>(r.lines) / r.cpuSeconds;
    state.counters["lines_per_wall_s"] = static_cast<double>(r.lines) / r.wallSeconds;
    state.counters["peak_mib"] = r.peakMiB;
    state.counters["lines"] = static_cast<double>(r.lines);
}

void BM_Replay_Combined_Gzip(benchmark::State& state) {
    const std::string path = makeLog(false);
    for (auto _ : state)
        report(state, inChild([&] { return replay(path, sim::LogFormat::Combined); }));
}

void BM_Replay_Caddy_Gzip(benchmark::State& state) {
    const std::string path = makeLog(true);
    for (auto _ : state)
        report(state, inChild([&] { return replay(path, sim::LogFormat::Caddy); }));
}

// Baseline: the same file gunzipped and split into lines, nothing else.
std::int64_t gunzipOnly(const std::string& path) {
    std::string error;
    std::unique_ptr<sim::LogInput> in = sim::LogInput::open(path, error);
    std::string_view line;
    std::int64_t n = 0, bytes = 0;
    while (in && in->next(line)) {
        ++n;
        bytes += static_cast<std::int64_t>(line.size());
    }
    benchmark::DoNotOptimize(bytes);
    return n;
}

void BM_Replay_Baseline_GunzipOnly_Combined(benchmark::State& state) {
    const std::string path = makeLog(false);
    for (auto _ : state)
        report(state, inChild([&] { return gunzipOnly(path); }));
}

void BM_Replay_Baseline_GunzipOnly_Caddy(benchmark::State& state) {
    const std::string path = makeLog(true);
    for (auto _ : state)
        report(state, inChild([&] { return gunzipOnly(path); }));
}

// Baseline: Caddy's lines through nlohmann-json's DOM, the fields a replay needs read out
// (no decision): the first 10^6 lines, gunzip included.
void BM_Replay_Baseline_NlohmannJson(benchmark::State& state) {
    const std::string path = makeLog(true);
    for (auto _ : state) {
        report(state, inChild([&] {
                   std::string error;
                   std::unique_ptr<sim::LogInput> in = sim::LogInput::open(path, error);
                   std::string_view line;
                   std::int64_t n = 0, bytes = 0;
                   while (n < kLines / 10 && in->next(line)) {
                       const nlohmann::json j = nlohmann::json::parse(line);
                       const auto& r = j.at("request");
                       bytes += static_cast<std::int64_t>(
                           r.at("remote_ip").get_ref<const std::string&>().size() +
                           r.at("uri").get_ref<const std::string&>().size() +
                           r.at("method").get_ref<const std::string&>().size() +
                           r.at("headers").size());
                       bytes += static_cast<std::int64_t>(j.at("ts").get<double>());
                       ++n;
                   }
                   benchmark::DoNotOptimize(bytes);
                   return n;
               }));
    }
}

// The scanner on the same lines, for the ratio: parse only, no decision.
void BM_Replay_ScannerJson(benchmark::State& state) {
    const std::string path = makeLog(true);
    for (auto _ : state) {
        report(state, inChild([&] {
                   std::string error;
                   std::unique_ptr<sim::LogInput> in = sim::LogInput::open(path, error);
                   auto parser = sim::LogLineParser::make({sim::LogFormat::Caddy, {}, {}}, error);
                   sim::LogRecord record;
                   sim::LineProblem problem;
                   std::string_view line;
                   std::int64_t n = 0, bytes = 0;
                   while (n < kLines / 10 && in->next(line)) {
                       if (parser->parse(line, record, problem) != sim::LineStatus::Ok) return 0L;
                       bytes += static_cast<std::int64_t>(
                           record.client.size() + record.path.size() + record.headers.size());
                       ++n;
                   }
                   benchmark::DoNotOptimize(bytes);
                   return n;
               }));
    }
}

BENCHMARK(BM_Replay_Combined_Gzip)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Replay_Caddy_Gzip)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Replay_Baseline_GunzipOnly_Combined)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Replay_Baseline_GunzipOnly_Caddy)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Replay_Baseline_NlohmannJson)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_Replay_ScannerJson)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace ratelab::bench
