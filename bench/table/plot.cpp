#include "plot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "amq/error.hpp"
#include "cli.hpp"

extern char** environ;

namespace amq::cli {
namespace {

namespace fs = std::filesystem;

// The y of a row: the mean of its present- and absent-key lookup times.
double lookup_ns(const bench::Row& r) {
  return r.lookup_neg_ns > 0 ? (r.lookup_pos_ns + r.lookup_neg_ns) / 2 : r.lookup_pos_ns;
}

// A gnuplot single-quoted string: no escapes inside but '' for a quote.
std::string gp_string(std::string_view s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "''";
    else q += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  return q + "'";
}

// A label column of a gnuplot data file: double-quoted, with no way to escape a '"'.
std::string data_label(std::string_view s) {
  std::string q = "\"";
  for (char c : s) q += c == '"' ? '\'' : static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  return q + "\"";
}

// eps as 1/N when 1/eps is a whole number, else %g.
std::string eps_text(double eps) {
  const double inv = 1 / eps;
  if (std::abs(inv - std::round(inv)) < 1e-9 * inv) return fmt::format("1/{:.0f}", std::round(inv));
  return fmt::format("{:g}", eps);
}

// The distinct target rates of the rows, largest first.
std::vector<double> distinct_targets(std::span<const bench::Row* const> rows) {
  std::vector<double> eps;
  for (const bench::Row* r : rows) eps.push_back(r->fpp_target);
  std::sort(eps.begin(), eps.end(), std::greater<>());
  eps.erase(std::unique(eps.begin(), eps.end(), [](double a, double b) { return std::abs(a - b) <= 1e-9 * a; }),
            eps.end());
  return eps;
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "amq-plot-XXXXXX").string();
    if (!::mkdtemp(t.data())) throw Error(Errc::io, t + ": cannot create: " + std::strerror(errno));
    path = t;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw Error(Errc::io, p.string() + ": cannot write: " + std::strerror(errno));
}

bool ends_with_png(const std::string& name) {
  if (name.size() < 4) return false;
  std::string ext = name.substr(name.size() - 4);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".png";
}

// What gnuplot draws: the rows' points, the vertical lines of the space bound at each
// target rate with their labels, and the axes' ranges.
struct PlotData {
  std::string points, bounds, bound_labels;
  double x_max = 0, y_lo = 0, y_hi = 0;
};

PlotData plot_data(std::span<const bench::Row* const> rows) {
  PlotData d;
  double y_min = lookup_ns(*rows[0]), y_max = y_min;
  for (const bench::Row* r : rows) {
    const double y = lookup_ns(*r);
    d.x_max = std::max(d.x_max, r->bits_per_key);
    y_min = std::min(y_min, y);
    y_max = std::max(y_max, y);
    d.points += fmt::format("{:.6g} {:.6g} {}\n", r->bits_per_key, y, data_label(r->structure));
  }
  // Log y axis: Redis rows take microseconds, in-memory filters a few ns.
  d.y_lo = y_min / 1.6;
  d.y_hi = y_max * 1.6;
  for (double eps : distinct_targets(rows)) {
    const double x = std::log2(1 / eps);
    d.x_max = std::max(d.x_max, x);
    d.bounds += fmt::format("{:.6g} {:.6g}\n{:.6g} {:.6g}\n\n", x, d.y_lo, x, d.y_hi);
    d.bound_labels += fmt::format("set label {} at {:.6g}, graph 0.98 right rotate by 90 offset char -0.6,0 tc rgb "
                                  "'gray30' font ',9'\n",
                                  gp_string(fmt::format("eps {}: {:.2f} bits", eps_text(eps), x)), x);
  }
  return d;
}

std::string gnuplot_script(const std::string& output, const std::string& title, const PlotData& d,
                           const fs::path& points_file, const fs::path& bounds_file) {
  const bool png = ends_with_png(output);
  std::string script;
  script += png ? "set terminal png size 1200,800 noenhanced font 'sans,11'\n"
                : "set terminal svg size 1200,800 dynamic noenhanced font 'sans,11' background rgb 'white'\n";
  script += "set encoding utf8\n";
  script += "set output " + gp_string(output) + "\n";
  script += "set title " + gp_string(title) + "\n";
  script += "set xlabel 'bits per key'\n";
  script += "set ylabel 'lookup ns per key (mean of present and absent keys)'\n";
  script += "set logscale y 2\nset format y '%g'\n";
  script += fmt::format("set xrange [0:{:.6g}]\nset yrange [{:.6g}:{:.6g}]\n", std::ceil(d.x_max * 1.3 + 1), d.y_lo,
                        d.y_hi);
  script += "set grid\nset key outside top center horizontal\n";
  script += d.bound_labels;
  script += "plot " + gp_string(bounds_file.string()) +
            " using 1:2 with lines dt 2 lw 1.5 lc rgb 'gray40' title 'space lower bound log2(1/eps)', \\\n  " +
            gp_string(points_file.string()) +
            " using 1:2 with points pt 7 ps 1.2 lc rgb '#1f5fa8' title 'filter (one point a structure)', \\\n  " +
            gp_string(points_file.string()) + " using 1:2:3 with labels left offset char 0.8,0 font ',9' notitle\n";
  script += "set output\n";
  return script;
}

// Runs `gnuplot SCRIPT`, its stderr into err_file. False (with a warning) when gnuplot is
// not installed; throws when it fails, with its last message.
bool run_gnuplot(const std::string& output, const fs::path& script_file, const fs::path& err_file) {
  std::fflush(stdout);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string arg0 = "gnuplot", arg1 = script_file.string();
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc == ENOENT) {
    fmt::print(stderr,
               "amq: {}: not plotted: gnuplot is not on PATH (Debian and Ubuntu: apt-get install gnuplot-nox)\n",
               escape_text(output));
    return false;
  }
  if (rc != 0) throw Error(Errc::io, output + ": cannot run gnuplot: " + std::strerror(rc));
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0)
    if (errno != EINTR) throw Error(Errc::io, output + ": waiting for gnuplot: " + std::strerror(errno));
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    // gnuplot's own message, last non-empty line, says what went wrong.
    std::ifstream err(err_file);
    std::string line, last;
    while (std::getline(err, line))
      if (line.find_first_not_of(" \t^") != std::string::npos) last = line;
    const std::string how = WIFEXITED(wstatus) ? fmt::format("exit status {}", WEXITSTATUS(wstatus))
                                               : fmt::format("signal {}", WTERMSIG(wstatus));
    throw Error(Errc::io, output + ": gnuplot failed (" + how + ")" + (last.empty() ? "" : ": " + last));
  }
  return true;
}

}  // namespace

bool is_plotted_row(const bench::Row& r) {
  return r.n > 0 && r.fpp_target > 0 && r.bits_per_key > 0 && r.lookup_pos_ns > 0;
}

bool plot_bench(const std::string& output, const std::string& title, std::span<const bench::Row> all) {
  std::vector<const bench::Row*> rows;
  for (const bench::Row& r : all)
    if (is_plotted_row(r)) rows.push_back(&r);
  if (rows.empty()) {
    fmt::print(stderr, "amq: {}: not plotted: no filter row (a structure with a false-positive rate) was measured\n",
               escape_text(output));
    return false;
  }
  const PlotData data = plot_data(rows);
  TempDir dir;
  const fs::path points_file = dir.path / "points.dat", bounds_file = dir.path / "bounds.dat",
                 script_file = dir.path / "plot.gp", err_file = dir.path / "gnuplot.err";
  write_file(points_file, data.points);
  write_file(bounds_file, data.bounds);
  write_file(script_file, gnuplot_script(output, title, data, points_file, bounds_file));
  return run_gnuplot(output, script_file, err_file);
}

}  // namespace amq::cli
