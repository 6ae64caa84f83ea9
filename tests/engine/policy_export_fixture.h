#pragma once

// Shared by the export tests: the source tree, files, and policies from files or text.

#include <QString>
#include <QtGlobal>
#include <fstream>
#include <sstream>
#include <string>

#include "ratelab/policy_file.h"

namespace ratelab::testing {

inline const QString kRoot = QStringLiteral(RATELAB_SOURCE_DIR "/");
inline const char* const kNginx = "/usr/sbin/nginx";

inline std::string readFile(const QString& path) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline void writeFile(const QString& path, const std::string& text) {
    std::ofstream(path.toStdString(), std::ios::binary) << text;
}

inline PolicySet load(const QString& path) {
    PolicyLoadResult r = loadPolicyFile(path.toStdString());
    if (!r.ok()) qFatal("%s does not load", qPrintable(path));
    return *r.policies;
}

inline PolicySet parse(const std::string& text) {
    PolicyLoadResult r = parsePolicyText(text, "inline.json");
    if (!r.ok()) {
        for (const Diagnostic& d : r.diagnostics)
            qWarning("%s", formatDiagnostic(d).c_str());
        qFatal("inline policy does not load");
    }
    return *r.policies;
}

}  // namespace ratelab::testing
