// How the ranks of a run of one process per GPU watch each other (harness/rank_watch.hpp), on this
// machine's loopback, no GPU: the deadline on lack of progress lets a long healthy wait complete and
// stops one that makes none; the links between ranks name a rank whose process has ended, killed or
// exited, as soon as it has.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness/rank_watch.hpp"

namespace memlab {
namespace {

using clock_type = progress_deadline::clock;
using std::chrono::seconds;

TEST(progress_deadline, a_long_wait_with_progress_completes) {
  // A wait of 100 s with a point of progress every 4 s never passes a deadline of 30 s: what a 4 GiB
  // collective replayed 100 times in a graph does (a replay every few seconds), simulated in time.
  const auto t0 = clock_type::now();
  progress_deadline d(30, t0);
  for (int s = 0; s <= 100; ++s) {
    const auto now = t0 + seconds(s);
    EXPECT_FALSE(d.expired(now)) << s;
    if (s % 4 == 0) d.progress(now);
  }
}

TEST(progress_deadline, a_wait_without_progress_gives_up_after_the_timeout) {
  const auto t0 = clock_type::now();
  progress_deadline d(30, t0);
  EXPECT_FALSE(d.expired(t0 + seconds(30)));
  EXPECT_TRUE(d.expired(t0 + seconds(31)));
  d.progress(t0 + seconds(25));  // progress counts from when it was seen
  EXPECT_FALSE(d.expired(t0 + seconds(50)));
  EXPECT_TRUE(d.expired(t0 + seconds(56)));
  EXPECT_DOUBLE_EQ(d.idle_s(t0 + seconds(35)), 10.0);
  EXPECT_DOUBLE_EQ(d.timeout_s(), 30.0);
}

// `n` ranks' links on loopback, connected as the world connects them (each rank in a thread of its own,
// as each would be in a process of its own).
std::vector<std::unique_ptr<rank_links>> connected(int n, double timeout_s = 10) {
  std::vector<std::unique_ptr<rank_links>> links;
  std::vector<link_address> addresses;
  for (int r = 0; r < n; ++r) {
    links.push_back(std::make_unique<rank_links>("127.0.0.1"));
    addresses.push_back(links.back()->listening());
  }
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        links[static_cast<std::size_t>(r)]->connect(r, addresses, timeout_s);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
  return links;
}

// Polls `links` until it reports a rank, for at most a second.
std::vector<int> ended_within_a_second(rank_links& links) {
  const auto until = clock_type::now() + seconds(1);
  while (clock_type::now() < until) {
    if (auto e = links.ended(); !e.empty()) return e;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return {};
}

TEST(rank_links, listen_where_the_route_to_the_root_leaves) {
  const rank_links l("127.0.0.1");
  EXPECT_EQ(l.listening().host, "127.0.0.1");
  EXPECT_GT(l.listening().port, 0);
}

TEST(rank_links, a_rank_that_ends_is_named_by_every_other) {
  auto links = connected(4);
  for (auto& l : links) EXPECT_TRUE(l->ended().empty());  // all running: nothing to report
  links[2].reset();                                       // rank 2's process ends: the kernel closes its connections
  for (int r : {0, 1, 3}) {
    EXPECT_EQ(ended_within_a_second(*links[static_cast<std::size_t>(r)]), std::vector<int>{2}) << "rank " << r;
    EXPECT_TRUE(links[static_cast<std::size_t>(r)]->ended().empty());  // reported once
  }
}

TEST(rank_links, a_killed_process_is_seen_at_once) {
  // Rank 1 in a process of its own, killed with SIGKILL (no handler runs, nothing closes a connection but
  // the kernel): rank 0, here, sees it within the second.
  rank_links mine("127.0.0.1");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  int port_pipe[2];
  ASSERT_EQ(pipe(port_pipe), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    rank_links theirs("127.0.0.1");
    const int port = theirs.listening().port;
    if (write(port_pipe[1], &port, sizeof port) != sizeof port) _exit(2);
    int their_port = 0;
    if (read(ready[0], &their_port, sizeof their_port) != sizeof their_port) _exit(2);
    try {
      theirs.connect(1, {{"127.0.0.1", their_port}, theirs.listening()}, 10);
    } catch (...) {
      _exit(3);
    }
    pause();  // until killed
    _exit(0);
  }
  int child_port = 0;
  ASSERT_EQ(read(port_pipe[0], &child_port, sizeof child_port), static_cast<ssize_t>(sizeof child_port));
  const int my_port = mine.listening().port;
  ASSERT_EQ(write(ready[1], &my_port, sizeof my_port), static_cast<ssize_t>(sizeof my_port));
  mine.connect(0, {mine.listening(), {"127.0.0.1", child_port}}, 10);
  EXPECT_TRUE(mine.ended().empty());
  const auto t0 = clock_type::now();
  kill(child, SIGKILL);
  EXPECT_EQ(ended_within_a_second(mine), std::vector<int>{1});
  EXPECT_LT(std::chrono::duration<double>(clock_type::now() - t0).count(), 1.0);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  for (int fd : {ready[0], ready[1], port_pipe[0], port_pipe[1]}) close(fd);
}

TEST(rank_links, a_rank_that_never_connects_is_named_within_the_timeout) {
  // Ranks 0 and 1 of 3; rank 2 listens (its address was published) but never connects.
  std::vector<std::unique_ptr<rank_links>> links;
  std::vector<link_address> addresses;
  for (int r = 0; r < 3; ++r) {
    links.push_back(std::make_unique<rank_links>("127.0.0.1"));
    addresses.push_back(links.back()->listening());
  }
  std::string error;
  std::thread one([&] {
    try {
      links[1]->connect(1, addresses, 1);
    } catch (const std::runtime_error&) {  // rank 1 waits for rank 2 too, and gives up as well
    }
  });
  try {
    links[0]->connect(0, addresses, 1);
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  one.join();
  EXPECT_NE(error.find("rank(s) 2 did not connect within 1 s"), std::string::npos) << error;
}

TEST(rank_links, an_address_nobody_listens_at_is_named) {
  auto free_port = [] {
    const rank_links probe("127.0.0.1");
    return probe.listening().port;  // closed again when probe goes: nobody listens there now
  };
  rank_links mine("127.0.0.1");
  const int port = free_port();
  try {
    mine.connect(1, {{"127.0.0.1", port}, mine.listening()}, 2);
    ADD_FAILURE() << "connected to a port nobody listens at";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 at 127.0.0.1:" + std::to_string(port)), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace memlab
