#include <QtTest>

#include <string>

#include "json/json_document.h"
#include "json/json_reader.h"

using namespace ratelab;

class TestJsonDocument : public QObject {
    Q_OBJECT

private slots:
    void positionsOfValuesAndKeys() {
        std::string text =
            "{\n"
            "  \"name\": \"api\",\n"
            "  \"numbers\": [1, 2.5,\n"
            "      -3],\n"
            "  \"nested\": {\"flag\": true, \"none\": null}\n"
            "}\n";
        json::Document doc = json::parse(text, "p.json");
        QVERIFY(doc.diagnostics.empty());
        QVERIFY(doc.root && doc.root->isObject());
        const json::Value* name = doc.root->find("name");
        QVERIFY(name);
        QCOMPARE(name->position().line, 2);
        QCOMPARE(name->position().column, 11);
        QCOMPARE(name->pointer(), std::string("/name"));
        const json::Value* numbers = doc.root->find("numbers");
        QCOMPARE(numbers->items().size(), std::size_t(3));
        QCOMPARE(numbers->items()[1]->position().column, 18);
        QCOMPARE(numbers->items()[1]->asDouble(), 2.5);
        QCOMPARE(numbers->items()[2]->position().line, 4);
        QCOMPARE(numbers->items()[2]->position().column, 7);
        QCOMPARE(numbers->items()[2]->asInt(), -3);
        QCOMPARE(numbers->items()[2]->pointer(), std::string("/numbers/2"));
        const json::Value* flag = doc.root->find("nested")->find("flag");
        QCOMPARE(flag->position().line, 5);
        QCOMPARE(flag->position().column, 22);
        QCOMPARE(doc.root->findMember("nested")->keyPosition.column, 3);
    }

    void columnsCountCharactersNotBytes() {
        json::Document doc = json::parse("{\"é\": \"ü\", \"k\": 1}", "u.json");
        QVERIFY(doc.diagnostics.empty());
        QCOMPARE(doc.root->find("k")->position().column, 17);
    }

    void syntaxErrorsNameLineAndColumn_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::newRow("trailing comma") << "{\n  \"a\": 1,\n}" << 3 << 1;
        QTest::newRow("truncated") << "{\"a\": [1, 2" << 1 << 12;
        QTest::newRow("bare word") << "{\"a\": nope}" << 1 << 8;
        QTest::newRow("empty") << "" << 1 << 1;
    }
    void syntaxErrorsNameLineAndColumn() {
        QFETCH(QString, text);
        QFETCH(int, line);
        QFETCH(int, column);
        std::string bytes = text.toStdString();
        json::Document doc = json::parse(bytes, "bad.json");
        QVERIFY(!doc.root);
        QCOMPARE(doc.diagnostics.size(), std::size_t(1));
        QCOMPARE(doc.diagnostics[0].line, line);
        QCOMPARE(doc.diagnostics[0].column, column);
        QVERIFY(formatDiagnostic(doc.diagnostics[0]).rfind("bad.json:", 0) == 0);
    }

    void duplicateKeysAreReportedAndFirstWins() {
        json::Document doc = json::parse("{\"a\": 1,\n \"a\": 2, \"b\": {\"c\": 1, \"c\": 3}}", "d.json");
        QVERIFY(doc.root);
        QCOMPARE(doc.diagnostics.size(), std::size_t(2));
        QCOMPARE(doc.diagnostics[0].line, 2);
        QCOMPARE(doc.diagnostics[0].column, 2);
        QCOMPARE(doc.diagnostics[0].pointer, std::string("/a"));
        QCOMPARE(doc.root->find("a")->asInt(), 1);
        QCOMPARE(doc.diagnostics[1].pointer, std::string("/b/c"));
    }

    void invalidUtf8IsRefusedWithPrintableMessage() {
        std::string text = "{\"a\": \"x\xff\"}";
        json::Document doc = json::parse(text, "u.json");
        QVERIFY(!doc.root);
        QCOMPARE(doc.diagnostics.size(), std::size_t(1));
        QVERIFY(doc.diagnostics[0].message.find("\xff") == std::string::npos);
        QVERIFY(doc.diagnostics[0].message.find("UTF-8") != std::string::npos);
    }

    void deepNestingStopsWithoutRecursion() {
        std::string text(100000, '[');
        text += std::string(100000, ']');
        json::Document doc = json::parse(text, "deep.json");
        QVERIFY(!doc.root);
        QCOMPARE(doc.diagnostics.size(), std::size_t(1));
        QCOMPARE(doc.diagnostics[0].column, 65);
        QVERIFY(doc.diagnostics[0].message.find("64 levels") != std::string::npos);
    }

    void longStringsAreRefusedWhereTheyStart() {
        std::string text = "{\"a\": 1, \"b\": \"" + std::string(10u << 20, 'x') + "\"}";
        json::Document doc = json::parse(text, "big.json");
        QCOMPARE(doc.diagnostics.size(), std::size_t(1));
        QCOMPARE(doc.diagnostics[0].column, 15);
        QCOMPARE(doc.diagnostics[0].pointer, std::string("/b"));
    }

    void pointersEscapeSlashAndTilde() {
        json::Document doc = json::parse("{\"a/b\": {\"~c\": 1}}", "p.json");
        QCOMPARE(doc.root->find("a/b")->find("~c")->pointer(), std::string("/a~1b/~0c"));
    }

    void readerReportsTypesRangesAndUnknownKeys() {
        json::Document doc =
            json::parse("{\"capacty\": 5, \"capacity\": 0, \"rate\": \"fast\", \"mode\": \"x\"}", "r.json");
        std::vector<Diagnostic> out;
        json::Reader reader("r.json", out);
        json::ObjectReader fields(reader, *doc.root, {"capacity", "rate", "mode"});
        std::int64_t capacity = 7;
        double rate = 1;
        int mode = 0;
        QVERIFY(!fields.readInt("capacity", capacity, 1, 100));
        QVERIFY(!fields.readNumber("rate", rate, 0, 1e6, true));
        QVERIFY(!fields.readEnum<int>("mode", mode, {{"enforce", 0}, {"shadow", 1}}));
        QCOMPARE(capacity, std::int64_t(7));
        QCOMPARE(out.size(), std::size_t(4));
        QCOMPARE(out[0].message, std::string("unknown key \"capacty\"; did you mean \"capacity\"?"));
        QCOMPARE(out[1].message, std::string("capacity must be between 1 and 100, found 0"));
        QCOMPARE(out[2].message, std::string("expected a number, found a string"));
        QCOMPARE(out[3].message, std::string("\"x\" is not one of \"enforce\", \"shadow\""));
    }
};

QTEST_APPLESS_MAIN(TestJsonDocument)
#include "tst_json_document.moc"
