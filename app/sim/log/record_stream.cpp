#include "sim/log/record_stream.h"

#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <deque>

#include "ratelab/number_text.h"
#include "sim/hash_index.h"
#include "sim/log/line_reader.h"

namespace ratelab::sim {

namespace {

constexpr std::int64_t kMicrosPerNano = 1000;

// A buffered line: its strings back to back in `text`.
struct Slot {
    std::int64_t epochMicros = 0;
    std::uint32_t file = 0;
    std::int64_t line = 0;
    int status = 0;
    std::uint32_t clientId = 0;
    std::optional<IpAddress> address;
    std::string text;
    std::uint32_t clientLen = 0, methodLen = 0, pathLen = 0;
    std::vector<std::uint32_t> headerLens;  // name, value, name, value, ...
};

struct HeapEntry {
    std::int64_t epochMicros;
    std::uint64_t seq;  // input order: equal times keep it
    std::uint32_t slot;
};

// std::push_heap makes a max-heap; "later" puts the earliest on top. A function object, so
// the heap's comparisons inline (a function pointer made them a third of the replay's cost).
struct Later {
    bool operator()(const HeapEntry& a, const HeapEntry& b) const {
        return a.epochMicros > b.epochMicros || (a.epochMicros == b.epochMicros && a.seq > b.seq);
    }
};
constexpr Later later;

std::string seconds(std::int64_t micros) {
    return fixedText(static_cast<double>(micros) / 1e6, 1);
}

std::string utcText(std::int64_t epochMicros) {
    const std::int64_t s = epochMicros / 1'000'000;
    std::int64_t days = s / 86'400;
    const std::int64_t rem = s % 86'400;
    // civil_from_days
    days += 719468;
    const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    const unsigned doe = static_cast<unsigned>(days - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2);
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                  static_cast<long long>(y), m, d, static_cast<long long>(rem / 3600),
                  static_cast<long long>(rem / 60 % 60), static_cast<long long>(rem % 60));
    return buffer;
}

}  // namespace

std::string LogReading::where(const LineNote& note) const {
    const std::string& file = note.file < files.size() ? files[note.file] : std::string("?");
    return file + ":" + std::to_string(note.line) + ":" + std::to_string(note.column);
}

IpAddress syntheticPeer(std::string_view hostName) {
    const XXH128_hash_t h = XXH3_128bits(hostName.data(), hostName.size());
    std::array<std::uint8_t, 16> bytes{};
    bytes[0] = 0xfd;
    for (int i = 0; i < 8; ++i)
        bytes[1 + i] = static_cast<std::uint8_t>(h.high64 >> (56 - 8 * i));
    for (int i = 0; i < 7; ++i)
        bytes[9 + i] = static_cast<std::uint8_t>(h.low64 >> (48 - 8 * i));
    return IpAddress::fromBytes(bytes);
}

struct LogStream::Impl {
    Impl(ReplayInput in, LogReading& r) : input(std::move(in)), reading(r) {
        reading = LogReading{};
        reading.files = input.files;
        reading.reorderWindow = input.reorderWindow;
        windowMicros = input.reorderWindow / kMicrosPerNano;
        for (const std::string& f : input.files) {
            struct stat st {};
            if (f == "-" || ::stat(f.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
                bytesTotal = -1;
                break;
            }
            bytesTotal += st.st_size;
        }
    }

    bool start();
    bool pump();  // reads one line (or moves to the next file); false when input is done
    bool openFile();
    void closeFile();
    void account(std::string_view line, std::int64_t lineNumber, bool tooLong);
    void fatal(std::int64_t line, int column, std::string message) {
        Diagnostic d;
        d.file = fileIndex < input.files.size() ? input.files[fileIndex] : std::string();
        d.line = static_cast<int>(std::min<std::int64_t>(line, INT32_MAX));
        d.column = column;
        d.message = std::move(message);
        reading.error = std::move(d);
    }
    void note(std::vector<LineNote>& list, std::int64_t line, int column, std::string message) {
        if (list.size() < kMaxListedLines) {
            list.push_back(
                LineNote{static_cast<std::uint32_t>(fileIndex), line, column, std::move(message)});
        }
    }
    std::uint32_t takeSlot() {
        if (!freeSlots.empty()) {
            const std::uint32_t s = freeSlots.back();
            freeSlots.pop_back();
            return s;
        }
        slots.emplace_back();
        return static_cast<std::uint32_t>(slots.size() - 1);
    }
    // A line waits in its slot for the reorder window (a minute of log, tens of thousands of
    // lines), so its slot has left the cache by the time it is emitted: the slots of the next
    // lines in order are asked for ahead, the one after next and the text of the next. Forced
    // inline, like HashIndex::prefetch.
    [[gnu::always_inline]] void prefetchNext() const {
        if (inOrder.size() > 2) {
            const char* p = reinterpret_cast<const char*>(&slots[inOrder[2].slot]);
            static_assert(sizeof(Slot) <= 192);
            __builtin_prefetch(p);
            __builtin_prefetch(p + 64);
            __builtin_prefetch(p + 128);
        }
        if (inOrder.size() > 1) __builtin_prefetch(slots[inOrder[1].slot].text.data());
    }
    void releaseSlot(std::uint32_t s) {
        bufferedBytes -= slots[s].text.size() + sizeof(Slot);
        freeSlots.push_back(s);
    }
    bool next(ReplayedLine& out);

    ReplayInput input;
    LogReading& reading;
    std::int64_t windowMicros = 0;
    std::optional<LogLineParser> parser;
    bool started = false;
    bool inputDone = false;

    std::size_t fileIndex = 0;
    std::unique_ptr<LogInput> in;
    std::int64_t bytesClosed = 0;
    std::int64_t bytesTotal = 0;
    // The first file's first lines, read to detect the format, then replayed.
    std::vector<std::pair<std::int64_t, std::string>> pending;
    std::size_t pendingPos = 0;
    // Per file: lines tried and read, the first problem, the first line's time.
    int tried = 0;
    int read = 0;
    LineNote firstProblem;
    std::optional<std::int64_t> fileFirst;
    std::optional<std::int64_t> previousFileFirst;

    // A deque: a slot never moves once made, so the views of the lines handed out (into its
    // strings, short ones held inline) stay valid while later lines take new slots.
    std::deque<Slot> slots;
    std::vector<std::uint32_t> freeSlots;
    // Lines in time order wait in `inOrder`, a queue: logs are nearly ordered, so most lines
    // are no earlier than the one before and cost a push and a pop. The rest wait in `heap`.
    std::deque<HeapEntry> inOrder;
    std::vector<HeapEntry> heap;
    std::size_t bufferedBytes = 0;
    std::uint64_t seq = 0;
    std::int64_t maxSeen = INT64_MIN;
    std::optional<std::int64_t> lastEmitted;
    // The slots (and header lists) of the lines next() handed out last, kept for a batch of
    // kRecordedBatch and the one a caller looks at the time of (ActorTraffic schedules ahead);
    // each emission releases the line handed out kKept emissions before.
    static constexpr std::size_t kKept = kRecordedBatch + 1;
    std::array<std::optional<std::uint32_t>, kKept> kept;
    std::array<std::vector<Header>, kKept> keptHeaders;
    std::size_t keptAt = 0;

    HashIndex clients;  // client field hash -> ReplayedLine::clientId
    // The line accounted last: its client is numbered when the next line is accounted, or
    // before any line is emitted. Its entry in `clients` is rarely in cache (a log has tens of
    // thousands of clients), and the wait lets the prefetch bring it; numbering still follows
    // the input's order.
    struct PendingClient {
        std::uint32_t slot;
        std::uint64_t hash;
        bool hostName;  // the client field is not an address
    };
    std::optional<PendingClient> pendingClient;
    void numberPendingClient() {
        if (!pendingClient) return;
        const HashIndex::Found client = clients.insert(pendingClient->hash);
        if (client.inserted) {
            ++reading.clients;
            if (pendingClient->hostName) ++reading.hostNames;
        }
        slots[pendingClient->slot].clientId = client.index;
        pendingClient.reset();
    }
    LogRecord record;
    LineProblem problem;
};

bool LogStream::Impl::openFile() {
    std::string error;
    in = LogInput::open(input.files[fileIndex], error);
    if (!in) {
        fatal(0, 0, error);
        reading.unreadable = true;
        return false;
    }
    tried = 0;
    read = 0;
    fileFirst.reset();
    if (parser) parser->startFile();
    // Binary data is refused at once, not read as thousands of garbage lines.
    const std::string_view head = in->head();
    std::size_t control = 0;
    for (std::size_t i = 0; i < head.size(); ++i) {
        const auto c = static_cast<unsigned char>(head[i]);
        if (c == 0) {
            fatal(0, 0,
                  "binary data, not a text log (a NUL byte at offset " + std::to_string(i) +
                      (in->gzip() ? " after gunzip)" : ")"));
            return false;
        }
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) ++control;
    }
    if (control * 10 > head.size()) {
        fatal(0, 0,
              "binary data, not a text log (" + std::to_string(control) + " of its first " +
                  std::to_string(head.size()) + " bytes are control characters)");
        return false;
    }
    return true;
}

void LogStream::Impl::closeFile() {
    if (in->truncated()) {
        reading.warnings.push_back(input.files[fileIndex] +
                                   ": the gzip data ends early (after line " +
                                   std::to_string(in->lineNumber()) +
                                   "): the file was cut off; the lines before were read");
    }
    bytesClosed += in->bytesRead();
    in.reset();
    if (fileFirst) previousFileFirst = fileFirst;
    ++fileIndex;
}

bool LogStream::Impl::start() {
    if (started) return !reading.error;
    started = true;
    if (input.files.empty()) {
        fatal(0, 0, "no log file given");
        return false;
    }
    if (!openFile()) return false;
    if (input.format) {
        std::string error;
        parser = LogLineParser::make(*input.format, error);
        if (!parser) {
            fatal(0, 0, error);
            return false;
        }
    } else {
        // Read the first non-empty lines to tell the format by; they are replayed after.
        std::string_view line;
        int nonEmpty = 0;
        while (nonEmpty < 10 && in->next(line)) {
            pending.emplace_back(in->lineNumber(), std::string(line));
            if (line.find_first_not_of(" \t") != std::string_view::npos) ++nonEmpty;
        }
        if (!in->error().empty()) {
            fatal(0, 0, in->error());
            reading.unreadable = in->readFailed();
            return false;
        }
        std::vector<std::string_view> sample;
        for (const auto& [n, text] : pending)
            sample.push_back(text);
        DetectedFormat detected = detectLogFormat(sample);
        if (!detected.options) {
            fatal(0, 0, detected.explanation);
            return false;
        }
        std::string error;
        parser = LogLineParser::make(*detected.options, error);
        reading.detection = detected.explanation;
    }
    parser->startFile();
    reading.format = parser->describe();
    return true;
}

void LogStream::Impl::account(std::string_view line, std::int64_t lineNumber, bool tooLong) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) return;
    LineStatus status;
    if (tooLong) {
        problem.column = static_cast<int>(kMaxLogLineBytes);
        problem.message = "the line is longer than 1 MiB";
        status = LineStatus::Unparsed;
    } else {
        status = parser->parse(line, record, problem);
    }
    if (status == LineStatus::Skipped) return;
    ++reading.lines;
    ++tried;
    if (status == LineStatus::Unparsed) {
        ++reading.unparsedCount;
        note(reading.unparsed, lineNumber, problem.column, problem.message);
        if (tried == 1) {
            firstProblem = LineNote{static_cast<std::uint32_t>(fileIndex), lineNumber,
                                    problem.column, problem.message};
        }
        if (tried >= kLinesBeforeRefusal && read == 0) {
            fatal(firstProblem.line, firstProblem.column,
                  "not a " + std::string(logFormatName(parser->options().format)) +
                      " log: none of its first " + std::to_string(kLinesBeforeRefusal) +
                      " lines can be read (here: " + firstProblem.message + ")");
        }
        return;
    }
    ++read;
    const std::int64_t t = record.epochMicros;
    if (!fileFirst) {
        fileFirst = t;
        if (previousFileFirst && t < *previousFileFirst) {
            fatal(lineNumber, 1,
                  "this file starts at " + utcText(t) + ", before the file given ahead of it (" +
                      utcText(*previousFileFirst) +
                      "): give rotated logs oldest first, e.g. access.log.2.gz access.log.1 "
                      "access.log");
            return;
        }
    }
    if (lastEmitted && t < *lastEmitted) {
        ++reading.outOfWindowCount;
        note(reading.outOfWindow, lineNumber, 1,
             seconds(maxSeen - t) + " s before the latest line read, more than the " +
                 seconds(windowMicros) + " s reorder window");
        return;
    }
    if (status == LineStatus::Damaged) {
        ++reading.damagedCount;
        note(reading.damaged, lineNumber, problem.column, problem.message);
    }
    numberPendingClient();
    const std::uint64_t clientHash = XXH3_64bits(record.client.data(), record.client.size());
    clients.prefetch(clientHash);
    const std::uint32_t s = takeSlot();
    Slot& slot = slots[s];
    slot.epochMicros = t;
    slot.file = static_cast<std::uint32_t>(fileIndex);
    slot.line = lineNumber;
    slot.status = record.status;
    slot.address = record.address;
    slot.text.clear();
    slot.text.append(record.client).append(record.method).append(record.path);
    slot.clientLen = static_cast<std::uint32_t>(record.client.size());
    slot.methodLen = static_cast<std::uint32_t>(record.method.size());
    slot.pathLen = static_cast<std::uint32_t>(record.path.size());
    slot.headerLens.clear();
    for (const Header& h : record.headers) {
        slot.text.append(h.name).append(h.value);
        slot.headerLens.push_back(static_cast<std::uint32_t>(h.name.size()));
        slot.headerLens.push_back(static_cast<std::uint32_t>(h.value.size()));
    }
    pendingClient = PendingClient{s, clientHash, !record.address};
    bufferedBytes += slot.text.size() + sizeof(Slot);
    if (inOrder.empty() || t >= inOrder.back().epochMicros) {
        inOrder.push_back(HeapEntry{t, seq++, s});
    } else {
        heap.push_back(HeapEntry{t, seq++, s});
        std::push_heap(heap.begin(), heap.end(), later);
    }
    maxSeen = std::max(maxSeen, t);
}

bool LogStream::Impl::pump() {
    if (pendingPos < pending.size()) {
        const auto& [n, text] = pending[pendingPos++];
        account(text, n, false);
        if (pendingPos == pending.size()) {
            pending.clear();
            pendingPos = 0;
        }
        return true;
    }
    if (!in) {
        if (fileIndex >= input.files.size()) return false;
        if (!openFile()) return false;
    }
    std::string_view line;
    if (in->next(line)) {
        account(line, in->lineNumber(), in->tooLong());
        return !reading.error;
    }
    if (!in->error().empty()) {
        fatal(0, 0, in->error());
        reading.unreadable = in->readFailed();
        return false;
    }
    if (tried > 0 && read == 0) {
        fatal(firstProblem.line, firstProblem.column,
              "not a " + std::string(logFormatName(parser->options().format)) +
                  " log: none of its lines can be read (here: " + firstProblem.message + ")");
        return false;
    }
    closeFile();
    return true;
}

bool LogStream::Impl::next(ReplayedLine& out) {
    if (!start()) return false;
    for (;;) {
        if (reading.error) return false;
        if (!heap.empty() || !inOrder.empty()) {
            const bool fromHeap =
                inOrder.empty() || (!heap.empty() && later(inOrder.front(), heap.front()));
            const HeapEntry top = fromHeap ? heap.front() : inOrder.front();
            const bool release = inputDone || top.epochMicros <= maxSeen - windowMicros ||
                                 heap.size() + inOrder.size() > kMaxReorderLines ||
                                 bufferedBytes > kMaxReorderBytes;
            if (release) {
                numberPendingClient();
                if (fromHeap) {
                    std::pop_heap(heap.begin(), heap.end(), later);
                    heap.pop_back();
                } else {
                    inOrder.pop_front();
                }
                Slot& slot = slots[top.slot];
                if (!lastEmitted) reading.startEpochMicros = slot.epochMicros;
                if (slot.epochMicros - reading.startEpochMicros > kMaxSpanMicros) {
                    ++reading.unparsedCount;
                    if (reading.unparsed.size() < kMaxListedLines) {
                        reading.unparsed.push_back(
                            LineNote{slot.file, slot.line, 1,
                                     "more than 36,500 days after the log's first line"});
                    }
                    releaseSlot(top.slot);
                    continue;
                }
                lastEmitted = slot.epochMicros;
                reading.endEpochMicros = slot.epochMicros;
                ++reading.replayed;
                keptAt = keptAt + 1 == kKept ? 0 : keptAt + 1;
                if (kept[keptAt]) releaseSlot(*kept[keptAt]);
                kept[keptAt] = top.slot;
                out.epochMicros = slot.epochMicros;
                out.file = slot.file;
                out.line = slot.line;
                out.status = slot.status;
                out.clientId = slot.clientId;
                out.address = slot.address;
                const std::string_view text = slot.text;
                std::size_t at = 0;
                auto take = [&](std::uint32_t n) {
                    const std::string_view v = text.substr(at, n);
                    at += n;
                    return v;
                };
                out.client = take(slot.clientLen);
                out.method = take(slot.methodLen);
                out.path = take(slot.pathLen);
                std::vector<Header>& headers = keptHeaders[keptAt];
                headers.clear();
                for (std::size_t i = 0; i + 1 < slot.headerLens.size(); i += 2) {
                    const std::string_view name = take(slot.headerLens[i]);
                    headers.push_back(Header{name, take(slot.headerLens[i + 1])});
                }
                out.headers = headers;
                prefetchNext();
                return true;
            }
        }
        if (inputDone) {
            // Lines listed by kind in file order, whatever order they were found in.
            for (auto* list : {&reading.unparsed, &reading.damaged, &reading.outOfWindow}) {
                std::stable_sort(list->begin(), list->end(),
                                 [](const LineNote& a, const LineNote& b) {
                                     return a.file != b.file ? a.file < b.file : a.line < b.line;
                                 });
            }
            reading.ended = true;
            return false;
        }
        if (!pump()) {
            if (reading.error) return false;
            inputDone = true;
        }
    }
}

LogStream::LogStream(ReplayInput input, LogReading& reading)
    : impl_(std::make_unique<Impl>(std::move(input), reading)) {}
LogStream::~LogStream() = default;

bool LogStream::start() {
    return impl_->start();
}

bool LogStream::next(ReplayedLine& out) {
    return impl_->next(out);
}

std::int64_t LogStream::bytesRead() const {
    return impl_->bytesClosed + (impl_->in ? impl_->in->bytesRead() : 0);
}

std::int64_t LogStream::bytesTotal() const {
    return impl_->bytesTotal;
}

double LogStream::fractionRead() const {
    const std::int64_t total = bytesTotal();
    return total > 0 ? static_cast<double>(bytesRead()) / static_cast<double>(total) : 0.0;
}

std::vector<Diagnostic> readingDiagnostics(const LogReading& reading, std::size_t perKind) {
    struct Entry {
        const LineNote* note;
        const char* prefix;
        bool unparsed;
    };
    std::vector<Entry> entries;
    const auto add = [&](const std::vector<LineNote>& notes, const char* prefix) {
        for (std::size_t i = 0; i < notes.size() && i < perKind; ++i)
            entries.push_back(Entry{&notes[i], prefix, &notes == &reading.unparsed});
    };
    add(reading.unparsed, "not replayed: cannot read the line as ");
    add(reading.damaged, "replayed with damage: ");
    add(reading.outOfWindow, "not replayed: out of order, ");
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.note->file != b.note->file ? a.note->file < b.note->file
                                            : a.note->line < b.note->line;
    });
    // "nginx", not its whole format string.
    const std::string format = reading.format.substr(0, reading.format.find(' '));
    std::vector<Diagnostic> out;
    for (const Entry& e : entries) {
        Diagnostic d;
        d.severity = Diagnostic::Severity::Warning;
        d.file = e.note->file < reading.files.size() ? reading.files[e.note->file] : "";
        d.line = static_cast<int>(std::min<std::int64_t>(e.note->line, INT32_MAX));
        d.column = e.note->column;
        d.message = e.prefix;
        if (e.unparsed) d.message += format + ": ";
        d.message += e.note->message;
        out.push_back(std::move(d));
    }
    for (const std::string& w : reading.warnings) {
        Diagnostic d;
        d.severity = Diagnostic::Severity::Warning;
        d.message = w;
        out.push_back(std::move(d));
    }
    return out;
}

}  // namespace ratelab::sim
