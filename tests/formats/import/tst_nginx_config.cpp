// nginx's configuration grammar as nginx 1.22 reads it: words, quotes, escapes, comments,
// blocks, include, and its syntax errors at FILE:LINE:COLUMN. Each expected error was checked
// against `nginx -t` on this machine (the message; nginx reports the line only).

#include <QTemporaryDir>
#include <QtTest>

#include "fixtures/policy_export_fixture.h"
#include "formats/import/nginx/nginx_config.h"

using namespace ratelab;
using namespace ratelab::formats;
using namespace ratelab::formats::nginx;
using namespace ratelab::testing;

namespace {

// The tree as text: "name[arg|arg]{...}" per directive, for compact expectations.
std::string render(const std::vector<NginxDirective>& directives) {
    std::string out;
    for (const NginxDirective& d : directives) {
        out += d.name();
        if (d.argumentCount() > 0) {
            out += "[";
            for (std::size_t i = 1; i < d.words.size(); ++i)
                out += (i > 1 ? "|" : "") + d.words[i].text;
            out += "]";
        }
        if (d.block) out += "{" + render(d.children) + "}";
        out += ";";
    }
    return out;
}

std::string diagnostics(ImportLog& log) {
    std::string out;
    for (const Diagnostic& d : log.take())
        out += formatDiagnostic(d) + "\n";
    return out;
}

}  // namespace

class TestNginxConfig : public QObject {
    Q_OBJECT

private slots:
    void grammar_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("tree");
        QTest::addColumn<QString>("errors");
        auto row = [](const char* name, const char* text, const char* tree, const char* errors) {
            QTest::newRow(name) << text << tree << errors;
        };
        row("directives", "a 1;\nb  x\ty;", "a[1];b[x|y];", "");
        row("block", "http { server { listen 80; } }", "http{server{listen[80];};};", "");
        row("comment", "a 1; # b 2;\nc;", "a[1];c;", "");
        row("hash inside a word", "a b#c;", "a[b#c];", "");
        row("double quotes", "a \"x y\" 'z;w';", "a[x y|z;w];", "");
        row("empty quoted", "a \"\";", "a[];", "");
        row("escapes", "a \"q\\\"q\" x\\;y \\t;", "a[q\"q|x\\;y|\t];", "");
        row("brace closes no unquoted word", "a b};", "a[b}];", "");
        row("variable braces", "a ${x}y;", "a[${x}y];", "");
        row("quoted word across lines", "a \"x\ny\";", "a[x\ny];", "");
        row("paren after quote", "if ($a = \"b\") { c; }", "if[($a|=|b|)]{c;};", "");
        row("unexpected brace", "a 1;\n}", "a[1];", "t.conf:2:1: error: unexpected \"}\"\n");
        row("brace after words", "a 1 }", "", "t.conf:1:5: error: unexpected \"}\"\n");
        row("word after quote", "a \"200\"x;", "", "t.conf:1:8: error: unexpected \"x\"\n");
        row("lone semicolon", ";", "", "t.conf:1:1: error: unexpected \";\"\n");
        row("missing semicolon at eof", "a 1", "",
            "t.conf:1:4: error: unexpected end of file, expecting \";\" or \"}\"\n");
        row("unterminated quote", "a \"x;\n", "",
            "t.conf:2:1: error: unexpected end of file, expecting \";\" or \"}\"\n");
        row("unclosed block", "http {\n  a 1;\n", "http{a[1];};",
            "t.conf:3:1: error: unexpected end of file, expecting \"}\"\n");
        row("block directive ended by ;", "location /a;", "",
            "t.conf:1:1: error: directive \"location\" has no opening \"{\"\n");
        row("simple directive opening a block", "limit_req zone=a {", "",
            "t.conf:1:1: error: directive \"limit_req\" is not terminated by \";\"\n");
        row("columns count characters", "a \"é\" }", "", "t.conf:1:7: error: unexpected \"}\"\n");
    }
    void grammar() {
        QFETCH(QString, text);
        QFETCH(QString, tree);
        QFETCH(QString, errors);
        ImportLog log;
        const NginxConfig config = parseNginxText(text.toStdString(), "t.conf", "", log);
        QCOMPARE(QString::fromStdString(diagnostics(log)), errors);
        if (errors.isEmpty() || !tree.isEmpty())
            QCOMPARE(QString::fromStdString(render(config.directives)), tree);
    }

    // include: relative to the main file's directory whatever file holds it (as nginx 1.22
    // resolves it: `nginx -t` on this layout looked sub/a.conf's "b.conf" up next to the main
    // file), globs in sorted order, a glob matching nothing is no error, a missing file is.
    void includeFollowsNginx() {
        QTemporaryDir dir;
        QDir(dir.path()).mkpath("conf/sub");
        QDir(dir.path()).mkpath("conf/zones");
        writeFile(dir.filePath("conf/main.conf"),
                  "http {\n    include sub/a.conf;\n    include zones/*.conf;\n"
                  "    include none/*.conf;\n}\n");
        writeFile(dir.filePath("conf/sub/a.conf"), "include b.conf;\n");
        writeFile(dir.filePath("conf/b.conf"), "from_b 1;\n");
        writeFile(dir.filePath("conf/sub/b.conf"), "wrong_b 1;\n");
        writeFile(dir.filePath("conf/zones/2.conf"), "zone 2;\n");
        writeFile(dir.filePath("conf/zones/1.conf"), "zone 1;\n");
        ImportLog log;
        const NginxConfig config =
            readNginxConfig(dir.filePath("conf/main.conf").toStdString(), log);
        QCOMPARE(QString::fromStdString(diagnostics(log)), QString());
        QCOMPARE(render(config.directives), std::string("http{from_b[1];zone[1];zone[2];};"));
        // Positions name the file each directive was read from.
        const NginxDirective& fromB = config.directives[0].children[0];
        QCOMPARE(log.fileName(fromB.at().file), dir.filePath("conf/b.conf").toStdString());
        QCOMPARE(fromB.at().line, 1);

        writeFile(dir.filePath("conf/sub/a.conf"), "include missing.conf;\n");
        ImportLog missing;
        readNginxConfig(dir.filePath("conf/main.conf").toStdString(), missing);
        const std::string text = diagnostics(missing);
        QVERIFY2(
            text.find(dir.filePath("conf/sub/a.conf").toStdString() + ":1:9: error: include \"" +
                      dir.filePath("conf/missing.conf").toStdString() + "\"") == 0,
            text.c_str());
    }
    void includeErrorsInTheIncludedFile() {
        QTemporaryDir dir;
        writeFile(dir.filePath("main.conf"), "http {\n    include part.conf;\n}\n");
        // An included file balances its own braces: its "}" cannot close the includer's block.
        writeFile(dir.filePath("part.conf"), "a 1;\n}\n");
        ImportLog log;
        readNginxConfig(dir.filePath("main.conf").toStdString(), log);
        QCOMPARE(diagnostics(log),
                 dir.filePath("part.conf").toStdString() + ":2:1: error: unexpected \"}\"\n");
    }
    void selfIncludeIsBounded() {
        QTemporaryDir dir;
        writeFile(dir.filePath("main.conf"), "include main.conf;\n");
        ImportLog log;
        readNginxConfig(dir.filePath("main.conf").toStdString(), log);
        const std::string text = diagnostics(log);
        QVERIFY2(text.find("include nested more than 32 deep") != std::string::npos, text.c_str());
    }
    void missingMainFileIsUnreadable() {
        ImportLog log;
        const NginxConfig config = readNginxConfig("/nonexistent/nginx.conf", log);
        QVERIFY(config.unreadable);
        QCOMPARE(diagnostics(log), std::string("/nonexistent/nginx.conf: error: cannot open the "
                                               "file: No such file or directory\n"));
    }
};

QTEST_APPLESS_MAIN(TestNginxConfig)
#include "tst_nginx_config.moc"
