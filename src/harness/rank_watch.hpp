// How the ranks of a distributed run watch each other while they wait (harness/world.hpp), on the host
// alone: no CUDA, no NCCL, testable with processes of a test.
//
// rank_links   which ranks are still running. Every rank holds a TCP connection to every other rank, on
//              which nothing is sent but the connecting rank's number, once: the kernel closes a
//              connection when its process ends, however it ends (an exit, a crash, SIGKILL), so a rank
//              learns at once that another has exited, on this host or any other, and can name it with its
//              host; a host that stops answering fails the connections' keepalive probes. The run's data and
//              its agreements never cross these connections (NCCL carries them): they carry no protocol.
// progress_deadline  the deadline of a wait on lack of progress, not on its length: a wait gives up once
//              `timeout_s` pass with nothing done, and every point of progress (a part of the work waited
//              for completing) starts the count again, so a healthy wait longer than the timeout (a 4 GiB
//              collective replayed 100 times in a graph, large sizes over a slow network) completes.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace memlab {

class progress_deadline {
 public:
  using clock = std::chrono::steady_clock;
  progress_deadline(double timeout_s, clock::time_point start) : timeout_s_(timeout_s), last_(start) {}
  // Something was done at `now`: the count starts again.
  void progress(clock::time_point now) { last_ = now; }
  // Seconds since the last progress (or the start).
  [[nodiscard]] double idle_s(clock::time_point now) const {
    return std::chrono::duration<double>(now - last_).count();
  }
  // `timeout_s` have passed with nothing done.
  [[nodiscard]] bool expired(clock::time_point now) const { return idle_s(now) > timeout_s_; }
  [[nodiscard]] double timeout_s() const { return timeout_s_; }

 private:
  double timeout_s_;
  clock::time_point last_;
};

// Where a rank listens for the others' connections: a numeric address ("10.0.0.3", "127.0.0.1", "fe80::1")
// and a port.
struct link_address {
  std::string host;
  int port = 0;
};

class rank_links {
 public:
  // Listens on an ephemeral port of the address this host reaches `root_host` from (the host the ranks
  // meet at: NCCL_COMM_ID's), the interface the other hosts reach this one through. Throws
  // std::runtime_error with the reason.
  explicit rank_links(const std::string& root_host);
  ~rank_links();
  rank_links(const rank_links&) = delete;
  rank_links& operator=(const rank_links&) = delete;

  [[nodiscard]] const link_address& listening() const { return listening_; }

  // Connects rank `rank` to every other rank of `addresses` (each rank's listening(), by rank): to every
  // rank below it, and accepts every rank above it, within `timeout_s`. Throws std::runtime_error naming
  // the rank and the address it could not reach. Keepalive probes close a connection whose host stops
  // answering after about `timeout_s`.
  void connect(int rank, const std::vector<link_address>& addresses, double timeout_s);

  // The ranks whose connection has closed since the last call, in rank order: their process has ended (or
  // their host stopped answering). Never blocks.
  std::vector<int> ended();

 private:
  link_address listening_;
  int listen_fd_ = -1;
  std::vector<int> fds_;  // by rank; -1 for this rank and for a rank already reported
};

}  // namespace memlab
