#include "gui/session/log_format_choice.h"

#include <QObject>
#include <QStringList>

namespace ratelab::gui {

bool readLogFormatChoice(const LogFormatChoice& choice, std::optional<sim::LogFormatOptions>& out,
                         QString& error) {
    out.reset();
    const QString name = choice.format.trimmed();
    if (name.isEmpty()) return true;
    const std::optional<sim::LogFormat> format = sim::parseLogFormat(name.toStdString());
    if (!format) {
        error = QObject::tr("format \"%1\": expected %2")
                    .arg(name, QString::fromStdString(sim::logFormatNames()));
        return false;
    }
    sim::LogFormatOptions options;
    options.format = *format;
    if (*format == sim::LogFormat::Nginx) options.nginxFormat = choice.nginxFormat.toStdString();
    if (*format == sim::LogFormat::Json) {
        for (const QString& field : choice.jsonFields.split(' ', Qt::SkipEmptyParts)) {
            std::optional<std::pair<std::string, std::string>> f =
                sim::parseJsonField(field.toStdString());
            if (!f) {
                error = QObject::tr("field \"%1\": expected ROLE=PATH, e.g. client=request.ip")
                            .arg(field);
                return false;
            }
            options.jsonFields.push_back(std::move(*f));
        }
    }
    std::string why;
    if (!sim::LogLineParser::make(options, why)) {
        error = QString::fromStdString(why);
        return false;
    }
    out = std::move(options);
    return true;
}

}  // namespace ratelab::gui
