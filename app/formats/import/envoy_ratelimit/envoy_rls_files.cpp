// The files of an envoy-ratelimit import: the service's configuration (files, a directory),
// the route configuration, or both in one stream as `export --to envoy-ratelimit` writes it.

#include <algorithm>
#include <filesystem>

#include "formats/import/envoy_ratelimit/envoy_rls_import.h"

namespace ratelab::formats::envoy_ratelimit {

namespace {

envoy::YamlNode parseActions(const envoy::RlsSource& source, int file, ImportLog& log) {
    envoy::YamlParseResult parsed = envoy::parseYaml(source.text);
    if (!parsed.ok)
        log.error(SourcePos{file, parsed.errorAt.line, parsed.errorAt.column}, parsed.error);
    return std::move(parsed.root);
}

// The route configuration an export's stream carries after its "---" line, padded with empty
// lines so that its lines keep their numbers in the file; `source` keeps the first document.
std::optional<envoy::RlsSource> splitStream(envoy::RlsSource& source) {
    const std::size_t cut = source.text.find("\n---\n");
    if (cut == std::string::npos) return std::nullopt;
    const std::string_view rest = std::string_view(source.text).substr(cut + 5);
    if (rest.find("virtual_hosts:") == std::string_view::npos) return std::nullopt;
    const auto before = std::count(source.text.begin(), source.text.begin() + cut + 5, '\n');
    envoy::RlsSource routes{source.name, std::string(static_cast<std::size_t>(before), '\n')};
    routes.text += rest;
    source.text.resize(cut + 1);
    return routes;
}

}  // namespace

std::optional<PolicyJson> mapEnvoyRatelimitSources(const std::vector<envoy::RlsSource>& config,
                                                   const std::optional<envoy::RlsSource>& actions,
                                                   ImportLog& log) {
    envoy::RlsLoadResult loaded = envoy::parseRlsConfig(config);
    for (const Diagnostic& d : loaded.diagnostics) {
        const std::vector<std::string>& files = log.files();
        const int file =
            static_cast<int>(std::find(files.begin(), files.end(), d.file) - files.begin());
        const SourcePos at{file < static_cast<int>(files.size()) ? file : 0, d.line, d.column};
        if (d.severity == Diagnostic::Severity::Error) {
            log.error(at, d.message);
        } else {
            log.warning(at, d.message);
        }
    }
    std::optional<EnvoyRoutes> routes;
    if (actions) {
        const int file = static_cast<int>(log.files().size()) - 1;
        const envoy::YamlNode root = parseActions(*actions, file, log);
        if (!log.hasErrors()) routes = readEnvoyRoutes(root, file, log);
    }
    if (!loaded.config || log.hasErrors()) return std::nullopt;
    return mapEnvoyRatelimit(*loaded.config, routes ? &*routes : nullptr, log);
}

RatelimitFiles ratelimitDirectory(const std::string& directory) {
    RatelimitFiles out;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(".") || !entry.is_regular_file(error)) continue;
        if (name == kRoutesFileName) {
            out.actions = entry.path().string();
        } else if (name.ends_with(".yaml") || name.ends_with(".yml")) {
            out.config.push_back(entry.path().string());
        }
    }
    std::sort(out.config.begin(), out.config.end());
    return out;
}

ImportResult importEnvoyRatelimit(const std::vector<std::string>& files,
                                  const std::string& actions) {
    ImportLog log;
    std::vector<std::string> paths;
    std::string actionsPath = actions;
    for (const std::string& f : files) {
        std::error_code error;
        if (!std::filesystem::is_directory(f, error)) {
            paths.push_back(f);
            continue;
        }
        RatelimitFiles dir = ratelimitDirectory(f);
        if (dir.config.empty()) {
            log.addFile(f);
            log.error(SourcePos{static_cast<int>(log.files().size()) - 1, 0, 0},
                      "the directory holds no *.yaml or *.yml file");
            return finishImport(log, std::nullopt, true);
        }
        paths.insert(paths.end(), dir.config.begin(), dir.config.end());
        if (actionsPath.empty()) actionsPath = dir.actions;
    }
    if (paths.empty()) {
        log.addFile("");
        log.error(SourcePos{0, 0, 0}, "envoy-ratelimit reads one or more RLS configuration files");
        return finishImport(log, std::nullopt, false);
    }
    std::vector<envoy::RlsSource> sources;
    std::optional<envoy::RlsSource> actionsSource;
    bool unreadable = false;
    auto read = [&](const std::string& path) -> std::optional<envoy::RlsSource> {
        const int file = log.addFile(path);
        std::string error;
        std::optional<std::string> text = readImportFile(path, error);
        if (!text) {
            log.error(SourcePos{file, 0, 0}, error);
            unreadable = true;
            return std::nullopt;
        }
        return envoy::RlsSource{path, std::move(*text)};
    };
    for (const std::string& p : paths) {
        if (std::optional<envoy::RlsSource> s = read(p)) sources.push_back(std::move(*s));
    }
    if (!actionsPath.empty()) {
        actionsSource = read(actionsPath);
    } else if (sources.size() == 1) {
        actionsSource = splitStream(sources.front());
        if (actionsSource) log.addFile(actionsSource->name);
    }
    if (unreadable) return finishImport(log, std::nullopt, true);
    return finishImport(log, mapEnvoyRatelimitSources(sources, actionsSource, log), false);
}

ImportResult importEnvoyRatelimitText(const std::vector<envoy::RlsSource>& config,
                                      const std::optional<envoy::RlsSource>& actions) {
    ImportLog log;
    for (const envoy::RlsSource& s : config)
        log.addFile(s.name);
    if (actions) log.addFile(actions->name);
    if (config.empty()) {
        log.addFile("");
        log.error(SourcePos{0, 0, 0}, "no RLS configuration");
        return finishImport(log, std::nullopt, false);
    }
    return finishImport(log, mapEnvoyRatelimitSources(config, actions, log), false);
}

}  // namespace ratelab::formats::envoy_ratelimit
