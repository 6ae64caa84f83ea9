#pragma once

// Numbers as text, for every file and message the engine, the simulator and the CLI write:
// always the C locale's spelling ("1.25"), whatever locale the process runs under. printf's
// %g and %f follow LC_NUMERIC, which QCoreApplication sets from the environment, so under
// de_DE.UTF-8 they write "1,25", and a CSV or nginx configuration made that way is wrong.
// These use std::to_chars, which never reads the locale.

#include <string>

namespace ratelab {

/// The shortest text that reads back as `x`, in %g's style: whole numbers below 1e15 without a
/// point or exponent ("20", "1000000000"), others with the fewest significant digits that read
/// back the same ("0.1", "1.25e-07"); "inf", "-inf" and "nan" for those. Thread-safe.
std::string numberText(double x);

/// `x` with `significant` significant digits (1 to 17), as printf's "%.<significant>g" writes
/// it in the C locale ("%.6g": 0.333333, 1e+06). Thread-safe.
std::string numberText(double x, int significant);

/// `x` with `decimals` digits after the point (0 to 30), as printf's "%.<decimals>f" writes it in
/// the C locale ("%.3f": 1.250). Thread-safe.
std::string fixedText(double x, int decimals);

}  // namespace ratelab
