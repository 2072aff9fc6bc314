// bench_math: math answer checks per second, RLWB's checker (rewards/math)
// side by side with Hugging Face math-verify on the same labelled corpus, in
// one run, and every case where the two disagree.
//
//   bench_math [--corpus PATH] [--python PATH] [--seconds S] [--passes N] [--rlwb-only]
//              [--compat-corpus PATH] [--rounds N] [--cpu N]
//
// RLWB checks the corpus over and over for --seconds (default 2) on one thread,
// after one warm-up pass. Rates are given by the clock and by CPU time (the
// latter is steadier on a shared machine). The reference side is bench/math_verify_ref.py run by
// --python (default: the interpreter CMake was given as RLWB_PYTHON), which
// reports its own parse+verify time over --passes passes (default 1) and its
// verdicts. Cases with options that math-verify has no equivalent for (percent
// rule, last-number fallback, rounding, a question) are marked with '*': there
// math-verify runs with its defaults against labels made for those options.
//
// Then the math-verify-compatible mode (MathCheckOptions::compat) on its own
// corpus (tests/rewards/math/compat_corpus.jsonl, labelled by math-verify):
// --rounds interleaved pairs, each RLWB's CPU time over the corpus and then
// math-verify's over the same corpus, every pair's ratio printed with the
// median and the spread, and RLWB's agreement with math-verify's verdicts.
// --cpu N pins the process (and so math-verify, its child) to core N. With
// --rlwb-only or --rounds 0 only the agreement and the disagreements are printed.
#include <cstdio>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_record.h"
#include "core/common/command_line.h"
#include "rewards/math/math_check.h"
#include "rewards/math/math_jsonl.h"

namespace {

using rlwb::rewards::MathCase;
using Clock = std::chrono::steady_clock;

struct Labelled {
  MathCase c;
  int label = 0;
  std::string rule;
  bool rlwb_options = false;  // options or a question math-verify cannot take
};

std::vector<Labelled> load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open the corpus " + path + "; pass --corpus PATH");
  std::vector<Labelled> out;
  std::string text;
  size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty()) continue;
    Labelled l;
    l.c = rlwb::rewards::parse_math_case(text, line, path, {});
    l.label = l.c.object.value("verdict", 0);
    l.rule = l.c.object.value("rule", "");
    l.rlwb_options = l.c.object.contains("options") || l.c.object.contains("question");
    out.push_back(std::move(l));
  }
  return out;
}

std::string run_command(const std::string& command, int* status) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) {
    *status = -1;
    return "";
  }
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  *status = pclose(pipe);
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string clip(std::string s, size_t n) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s.size() > n ? s.substr(0, n - 3) + "..." : s;
}

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// RLWB's checks per CPU-second over `cases`, passes repeated for at least min_cpu_s.
double rlwb_cpu_rate(const std::vector<Labelled>& cases, double min_cpu_s) {
  // Every verdict of the timed passes is held against the untimed pass's:
  // a checker whose answer changes between passes would not be measured.
  std::vector<int> expected;
  for (const Labelled& l : cases)
    expected.push_back(rlwb::rewards::check_math_answer(l.c.response, l.c.reference, l.c.options).score);
  size_t checks = 0, changed = 0;
  double start = cpu_seconds(), used = 0;
  while (used < min_cpu_s) {
    for (size_t i = 0; i < cases.size(); ++i, ++checks)
      changed +=
          rlwb::rewards::check_math_answer(cases[i].c.response, cases[i].c.reference, cases[i].c.options)
              .score != expected[i];
    used = cpu_seconds() - start;
  }
  if (changed > 0) throw std::runtime_error(std::to_string(changed) + " verdicts changed between passes");
  return checks / used;
}

// The compat section: returns 0 when every pair met the goal and agreement is >= 97%.
int compare_compat_mode(const std::string& corpus, const std::string& python, const std::string& script,
                        int rounds) {
  rlwb::rewards::MathCheckOptions compat;
  compat.compat = rlwb::rewards::CompatMode::kMathVerify;
  std::vector<Labelled> cases = load(corpus);
  for (Labelled& l : cases) l.c.options = compat;  // the corpus has no per-line options
  std::vector<int> ours(cases.size());
  for (size_t i = 0; i < cases.size(); ++i)
    ours[i] = rlwb::rewards::check_math_answer(cases[i].c.response, cases[i].c.reference, compat).score;
  size_t agree = 0;
  std::cout << "\nmath-verify mode (--compat math-verify), " << cases.size() << " cases labelled by "
            << "math-verify (" << corpus << ")\ndisagreements (id, RLWB, math-verify, RLWB's reason):\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    if (ours[i] == cases[i].label) {
      ++agree;
      continue;
    }
    rlwb::rewards::MathVerdict v =
        rlwb::rewards::check_math_answer(cases[i].c.response, cases[i].c.reference, compat);
    std::cout << "  " << cases[i].c.object.value("id", std::string("?")) << " " << ours[i] << " "
              << cases[i].label << "  '" << clip(v.extracted, 30) << "' vs '" << clip(v.reference_answer, 24)
              << "': " << clip(v.reason, 90) << "\n";
  }
  std::cout << "agreement with math-verify: " << agree << "/" << cases.size() << "\n";
  if (rounds == 0) return agree * 100 >= 97 * cases.size() ? 0 : 1;
  std::cout << "one thread, CPU time, " << rounds << " interleaved pairs:\n";
  std::vector<double> ratios, ours_rates, theirs_rates;
  std::string version = "?";
  for (int round = 1; round <= rounds; ++round) {
    double ours_rate = rlwb_cpu_rate(cases, 0.5);
    int status = 0;
    std::string out = run_command(shell_quote(python) + " " + shell_quote(script) + " " +
                                      shell_quote(corpus) + " --as-written --passes 1 2>/dev/null",
                                  &status);
    nlohmann::json ref;
    try {
      if (status != 0) throw std::runtime_error("exit status " + std::to_string(status));
      ref = nlohmann::json::parse(out);
    } catch (const std::exception& e) {
      std::cout << "math-verify: not run (" << e.what() << "; is math-verify installed? " << python
                << " -m pip install -r scripts/python-requirements.txt)\n";
      return 1;
    }
    double theirs_rate = ref["checks_per_cpu_second"].get<double>();
    ratios.push_back(ours_rate / theirs_rate);
    ours_rates.push_back(ours_rate);
    theirs_rates.push_back(theirs_rate);
    version = ref.value("version", std::string("?"));
    std::cout << "  pair " << round << ": RLWB " << std::fixed << std::setprecision(0) << ours_rate
              << " checks/CPU-s, math-verify " << ref.value("version", std::string("?")) << " "
              << std::setprecision(1) << theirs_rate << " checks/CPU-s, ratio " << std::setprecision(0)
              << ratios.back() << "x\n";
    if (round == 1) {
      std::vector<int> theirs = ref["verdicts"].get<std::vector<int>>();
      size_t same_now = 0;
      for (size_t i = 0; i < cases.size() && i < theirs.size(); ++i) same_now += theirs[i] == cases[i].label;
      std::cout << "  math-verify now gives the corpus's labels on " << same_now << "/" << cases.size()
                << " cases\n";
    }
  }
  std::vector<double> sorted = ratios;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted[sorted.size() / 2];
  std::cout << "  ratio median " << std::setprecision(0) << median << "x, spread " << sorted.front() << "x-"
            << sorted.back() << "x (goal: >= 1000x); agreement with math-verify " << agree << "/"
            << cases.size() << " = " << std::setprecision(1) << 100.0 * agree / cases.size() << "%\n";
  const bool met = sorted.front() >= 1000 && agree * 100 >= 97 * cases.size();
  rlwb::bench::record_figure({.key = "math/compat_cpu",
                              .title = "math checking, math-verify mode, CPU time, " +
                                       std::to_string(cases.size()) + "-case compat corpus (`bench_math`)",
                              .value = ours_rates.empty() ? 0 : ours_rates[ours_rates.size() / 2],
                              .unit = "checks/CPU-s",
                              .peer = "math-verify " + version,
                              .peer_value = theirs_rates.empty() ? 0 : theirs_rates[theirs_rates.size() / 2],
                              .pair_ratios = ratios,
                              .goal = ">= 1000x in every pair, agreement >= 97%",
                              .met = met});
  return met ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string corpus = RLWB_SOURCE_DIR "/tests/rewards/math/math_corpus.jsonl";
  std::string python = RLWB_PYTHON;
  std::string script = RLWB_SOURCE_DIR "/bench/math_verify_ref.py";
  double seconds = 2.0;
  int passes = 1;
  CLI::App app{"bench_math: the math answer checker's checks/s vs math-verify on the same corpus",
               "bench_math"};
  app.option_defaults()->always_capture_default();
  app.add_option("--corpus", corpus, "JSON Lines corpus of labelled answers");
  app.add_option("--python", python, "interpreter with math-verify");
  app.add_option("--seconds", seconds, "how long RLWB checks the corpus over and over")
      ->check(CLI::PositiveNumber);
  app.add_option("--passes", passes, "passes of the reference over the corpus")->check(CLI::PositiveNumber);
  bool rlwb_only = false;
  app.add_flag("--rlwb-only", rlwb_only, "skip the reference");
  std::string compat_corpus = RLWB_SOURCE_DIR "/tests/rewards/math/compat_corpus.jsonl";
  int rounds = 3;
  int cpu = -1;
  app.add_option("--compat-corpus", compat_corpus,
                 "corpus labelled by math-verify, for the math-verify mode");
  app.add_option("--rounds", rounds,
                 "interleaved RLWB / math-verify pairs in the math-verify mode section (0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--cpu", cpu, "pin this process and math-verify to this core (-1: no pinning)");
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  const bool reference = !rlwb_only;
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
      std::cerr << "bench_math: cannot pin to core " << cpu << ": " << std::strerror(errno) << "\n";
      return 2;
    }
  }
  // The math-verify mode after the default mode's table, unless --rlwb-only or --rounds 0.
  auto compat_section = [&](int status) {
    return compare_compat_mode(compat_corpus, python, script, reference ? rounds : 0) == 0 ? status : 1;
  };

  std::vector<Labelled> cases = load(corpus);
  auto check = [](const Labelled& l) {
    return rlwb::rewards::check_math_answer(l.c.response, l.c.reference, l.c.options, l.c.question).score;
  };

  // RLWB: a warm-up pass (GiNaC's first use), then passes until the time is up.
  std::vector<int> ours(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) ours[i] = check(cases[i]);
  size_t checks = 0;
  auto start = Clock::now();
  std::clock_t cpu_start = std::clock();
  double elapsed = 0;
  size_t changed = 0;  // verdicts of the timed passes that differ from the first pass's
  while (elapsed < seconds) {
    for (size_t i = 0; i < cases.size(); ++i, ++checks) changed += check(cases[i]) != ours[i];
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  if (changed > 0) {
    std::cerr << "bench_math: " << changed << " verdicts changed between passes of the same corpus\n";
    return 1;
  }
  double ours_rate = checks / elapsed;
  double ours_cpu_rate = checks / (static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC);

  nlohmann::json ref;
  std::string ref_problem;
  if (reference) {
    int status = 0;
    std::string out =
        run_command(shell_quote(python) + " " + shell_quote(script) + " " + shell_quote(corpus) +
                        " --passes " + std::to_string(passes) + " 2>/dev/null",
                    &status);
    try {
      if (status != 0) throw std::runtime_error("exit status " + std::to_string(status));
      ref = nlohmann::json::parse(out);
      if (ref.at("verdicts").size() != cases.size())
        throw std::runtime_error("verdict count differs from the corpus");
    } catch (const std::exception& e) {
      ref_problem = std::string(e.what()) + "; is math-verify installed? " + python +
                    " -m pip install -r scripts/python-requirements.txt";
      ref = nullptr;
    }
  }

  size_t ours_right = 0;
  for (size_t i = 0; i < cases.size(); ++i) ours_right += ours[i] == cases[i].label;

  std::cout << "math answer checks, " << cases.size() << " labelled cases (" << corpus << "), one thread\n\n";
  std::cout << std::left << std::setw(22) << "checker" << std::right << std::setw(14) << "checks/s"
            << std::setw(18) << "checks/CPU-s" << std::setw(16) << "right (labels)"
            << "\n";
  std::cout << std::left << std::setw(22) << "RLWB rewards/math" << std::right << std::setw(14) << std::fixed
            << std::setprecision(0) << ours_rate << std::setw(18) << ours_cpu_rate << std::setw(10)
            << ours_right << "/" << cases.size() << "\n";
  if (ref.is_null()) {
    if (reference) std::cout << "math-verify: not run (" << ref_problem << ")\n";
    return compat_section(ours_right == cases.size() ? 0 : 1);
  }
  std::vector<int> theirs = ref["verdicts"].get<std::vector<int>>();
  size_t theirs_right = 0;
  for (size_t i = 0; i < cases.size(); ++i) theirs_right += theirs[i] == cases[i].label;
  double theirs_rate = ref["checks_per_second"].get<double>();
  double theirs_cpu_rate = ref["checks_per_cpu_second"].get<double>();
  double theirs_fast = ref["checks_per_second_without_slow"].get<double>();
  std::cout << std::left << std::setw(22) << ("math-verify " + ref.value("version", std::string("?")))
            << std::right << std::setw(14) << std::setprecision(1) << theirs_rate << std::setw(18)
            << theirs_cpu_rate << std::setw(10) << theirs_right << "/" << cases.size() << "\n";
  std::cout << std::left << std::setw(22) << "  without slow cases" << std::right << std::setw(14)
            << theirs_fast << "   (" << ref["slow_cases"].size() << " cases over 1 s: its parsing timeout)\n";
  rlwb::bench::record_figure(
      {.key = "math/default_cpu",
       .title = "math checking, CPU time, " + std::to_string(cases.size()) + "-case corpus (`bench_math`)",
       .value = ours_cpu_rate,
       .unit = "checks/CPU-s",
       .peer = "math-verify " + ref.value("version", std::string("?")) +
               " (its timeouts counted; without them: " + std::to_string(static_cast<long>(theirs_fast)) +
               " checks/s)",
       .peer_value = theirs_cpu_rate,
       .pair_ratios = {ours_cpu_rate / theirs_cpu_rate},
       .goal = ">= 50x",
       .met = ours_cpu_rate / theirs_cpu_rate >= 50});
  std::cout << "\nRLWB is " << std::setprecision(0) << ours_rate / theirs_rate << "x faster by the clock, "
            << ours_cpu_rate / theirs_cpu_rate << "x by CPU time, " << ours_rate / theirs_fast
            << "x against math-verify without its slow cases\n";

  size_t mv_right_ours_wrong = 0, both_wrong = 0, disagreements = 0;
  std::cout << "\ndisagreements (label, RLWB, math-verify; * = RLWB options or a question):\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    const Labelled& l = cases[i];
    if (ours[i] != l.label && theirs[i] == l.label) ++mv_right_ours_wrong;
    if (ours[i] != l.label && theirs[i] != l.label) ++both_wrong;
    if (ours[i] == theirs[i]) continue;
    ++disagreements;
    std::cout << "  line " << std::setw(3) << l.c.line << (l.rlwb_options ? "*" : " ") << " " << std::left
              << std::setw(20) << l.rule << std::right << " " << l.label << " " << ours[i] << " " << theirs[i]
              << "  " << clip(l.c.response, 48) << "  |  " << clip(l.c.reference, 30) << "\n";
  }
  std::cout << disagreements
            << " disagreements; math-verify right where RLWB is wrong: " << mv_right_ours_wrong
            << "; both wrong: " << both_wrong << "\n";
  return compat_section(mv_right_ours_wrong == 0 && ours_right == cases.size() ? 0 : 1);
}
