#include "sohusim/studies/point_runner.hpp"

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sohusim::studies {

namespace {

using Clock = std::chrono::steady_clock;

struct Running {
  pid_t pid = -1;
  const SweepPoint* point = nullptr;
  Clock::time_point start;
  std::string out, err;
};

// fork + exec with stdout and stderr to files, in a process group of its own (so that a
// time-out kills the point and everything it started). Returns the child's pid.
pid_t spawn(const std::string& program, const std::vector<std::string>& args, const std::string& out,
            const std::string& err) {
  const int fo = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int fe = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fo < 0 || fe < 0) {
    if (fo >= 0) ::close(fo);
    if (fe >= 0) ::close(fe);
    throw std::runtime_error("cannot create the point's output files '" + out + "': " + std::strerror(errno));
  }
  std::vector<std::string> argv_text;
  argv_text.push_back(program);
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fo);
    ::close(fe);
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    const int in = ::open("/dev/null", O_RDONLY);
    if (in >= 0) ::dup2(in, 0);
    ::dup2(fo, 1);
    ::dup2(fe, 2);
    ::execv(program.c_str(), argv.data());
    const char msg[] = "sohusim sweep: cannot execute the point's program\n";
    [[maybe_unused]] const auto n = ::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent: no window in which a kill misses the group
  ::close(fo);
  ::close(fe);
  return pid;
}

std::string read_file(const std::string& path) {
  std::ifstream is(path);
  std::ostringstream s;
  s << is.rdbuf();
  return s.str();
}

}  // namespace

std::string file_tail(const std::string& path, std::size_t max_bytes) {
  std::ifstream is(path, std::ios::binary | std::ios::ate);
  if (!is) return {};
  const std::streamoff size = is.tellg();
  const std::streamoff from =
      size > static_cast<std::streamoff>(max_bytes) ? size - static_cast<std::streamoff>(max_bytes) : 0;
  is.seekg(from);
  std::string text(static_cast<std::size_t>(size - from), '\0');
  is.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

PointRunner::PointRunner(std::string program, std::string work_dir, unsigned jobs, double timeout_s)
    : program_(std::move(program)), work_dir_(std::move(work_dir)), jobs_(jobs == 0 ? 1 : jobs), timeout_s_(timeout_s) {
  std::filesystem::create_directories(work_dir_);
}

std::size_t PointRunner::run(const std::vector<SweepPoint>& points, const Done& on_done) {
  std::vector<Running> running;
  std::size_t next = 0, finished = 0;
  auto kill_all = [&running] {
    for (const Running& r : running) ::kill(-r.pid, SIGKILL);
    for (const Running& r : running) ::waitpid(r.pid, nullptr, 0);
    running.clear();
  };
  try {
    while ((next < points.size() || !running.empty()) && !stop_.load()) {
      while (running.size() < jobs_ && next < points.size()) {
        const SweepPoint& p = points[next++];
        Running r;
        r.point = &p;
        r.out = work_dir_ + "/" + p.key + ".json";
        r.err = work_dir_ + "/" + p.key + ".err";
        r.start = Clock::now();
        r.pid = spawn(program_, p.args, r.out, r.err);
        running.push_back(std::move(r));
      }
      bool reaped = false;
      for (std::size_t i = 0; i < running.size();) {
        Running& r = running[i];
        int wstatus = 0;
        const pid_t got = ::waitpid(r.pid, &wstatus, WNOHANG);
        const double elapsed = std::chrono::duration<double>(Clock::now() - r.start).count();
        PointOutcome o;
        if (got == r.pid) {
          ::kill(-r.pid, SIGKILL);  // whatever the point left behind in its group
          o.wall_seconds = elapsed;
          o.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
          o.result = read_file(r.out);
          const bool has_json = o.result.find('{') != std::string::npos;
          o.status = o.exit_code == 0 && has_json ? "ok" : "failed";
          if (o.status != "ok") {
            o.error = file_tail(r.err, kErrorTail);
            if (WIFSIGNALED(wstatus))
              o.error += std::string(o.error.empty() ? "" : "\n") + "killed by signal " +
                         std::to_string(WTERMSIG(wstatus)) + " (" + strsignal(WTERMSIG(wstatus)) + ")";
            if (o.error.empty()) o.error = "exit code " + std::to_string(o.exit_code) + ", nothing on stderr";
          }
        } else if (elapsed > timeout_s_) {
          ::kill(-r.pid, SIGKILL);
          ::waitpid(r.pid, nullptr, 0);
          o.wall_seconds = elapsed;
          o.exit_code = 128 + SIGKILL;
          o.status = "timeout";
          o.error = file_tail(r.err, kErrorTail);
          std::ostringstream m;
          m << "killed after the sweep's timeout of " << timeout_s_ << " s";
          o.error += (o.error.empty() ? "" : "\n") + m.str();
        } else {
          ++i;
          continue;
        }
        const SweepPoint& p = *r.point;
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        ++finished;
        reaped = true;
        on_done(p, o);
      }
      if (!reaped && !running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  } catch (...) {
    kill_all();
    throw;
  }
  kill_all();
  return finished;
}

}  // namespace sohusim::studies
