#include "harness/rank_watch.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace memlab {

namespace {

using clock_type = std::chrono::steady_clock;

std::string errno_text(int e) { return std::strerror(e); }

// An address and port, resolved (numeric hosts resolve without a lookup).
struct resolved {
  sockaddr_storage addr{};
  socklen_t length = 0;
  int family = AF_UNSPEC;
};

resolved resolve(const std::string& host, int port, int socktype) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = socktype;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0 || found == nullptr) {
    throw std::runtime_error(fmt::format("cannot resolve {}: {}", host, gai_strerror(rc)));
  }
  resolved r;
  std::memcpy(&r.addr, found->ai_addr, found->ai_addrlen);
  r.length = found->ai_addrlen;
  r.family = found->ai_family;
  freeaddrinfo(found);
  return r;
}

std::string numeric_host(const sockaddr_storage& a) {
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw = a.ss_family == AF_INET6
                        ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr)
                        : static_cast<const void*>(&reinterpret_cast<const sockaddr_in&>(a).sin_addr);
  if (inet_ntop(a.ss_family, raw, text, sizeof text) == nullptr) return {};
  return text;
}

int port_of(const sockaddr_storage& a) {
  return ntohs(a.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(a).sin6_port
                                       : reinterpret_cast<const sockaddr_in&>(a).sin_port);
}

// The local address of the route to `host`: a UDP socket "connected" there sends nothing, and names the
// interface the kernel would use.
sockaddr_storage route_to(const std::string& host) {
  const resolved r = resolve(host, 9, SOCK_DGRAM);
  const int fd = socket(r.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket: " + errno_text(errno));
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&r.addr), r.length) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0;
  const int e = errno;
  close(fd);
  if (!ok) throw std::runtime_error(fmt::format("no route to {}: {}", host, errno_text(e)));
  return local;
}

void keep_alive(int fd, double timeout_s) {
  // Probes after a third of the timeout of silence, three of them a ninth apart: a connection to a host
  // that stopped answering closes after about the timeout.
  const int one = 1;
  const int idle = std::max(1, static_cast<int>(timeout_s / 3));
  const int interval = std::max(1, static_cast<int>(timeout_s / 9));
  const int count = 3;
  (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

// Milliseconds left before `deadline` (0 when passed), for poll().
int ms_left(clock_type::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1000));
}

}  // namespace

rank_links::rank_links(const std::string& root_host) {
  sockaddr_storage local = route_to(root_host);
  listening_.host = numeric_host(local);
  listen_fd_ = socket(local.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw std::runtime_error("socket: " + errno_text(errno));
  // Any interface of the route's family, on a port of the kernel's choosing.
  sockaddr_storage any{};
  any.ss_family = local.ss_family;
  const socklen_t length = local.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (bind(listen_fd_, reinterpret_cast<const sockaddr*>(&any), length) != 0 || listen(listen_fd_, SOMAXCONN) != 0) {
    const int e = errno;
    close(listen_fd_);
    throw std::runtime_error("cannot listen for the other ranks: " + errno_text(e));
  }
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof bound;
  (void)getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &bound_length);
  listening_.port = port_of(bound);
}

rank_links::~rank_links() {
  for (int fd : fds_)
    if (fd >= 0) close(fd);
  if (listen_fd_ >= 0) close(listen_fd_);
}

void rank_links::connect(int rank, const std::vector<link_address>& addresses, double timeout_s) {
  const auto size = static_cast<int>(addresses.size());
  fds_.assign(addresses.size(), -1);
  const auto deadline =
      clock_type::now() + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(timeout_s));
  const auto where = [&](int q) {
    return fmt::format("rank {} at {}:{}", q, addresses[static_cast<std::size_t>(q)].host,
                       addresses[static_cast<std::size_t>(q)].port);
  };
  // To every rank below this one: a connection, then this rank's number (4 bytes, network order).
  for (int q = 0; q < rank; ++q) {
    const auto& a = addresses[static_cast<std::size_t>(q)];
    const resolved r = resolve(a.host, a.port, SOCK_STREAM);
    const int fd = socket(r.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) throw std::runtime_error("socket: " + errno_text(errno));
    fds_[static_cast<std::size_t>(q)] = fd;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&r.addr), r.length) != 0 && errno != EINPROGRESS) {
      throw std::runtime_error(fmt::format("cannot reach {}: {}", where(q), errno_text(errno)));
    }
    for (;;) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, ms_left(deadline)) > 0) break;
      if (clock_type::now() > deadline) {
        throw std::runtime_error(fmt::format("{} did not answer within {:.0f} s", where(q), timeout_s));
      }
    }
    int error = 0;
    socklen_t length = sizeof error;
    (void)getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) throw std::runtime_error(fmt::format("cannot reach {}: {}", where(q), errno_text(error)));
    const std::uint32_t word = htonl(static_cast<std::uint32_t>(rank));
    if (send(fd, &word, sizeof word, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof word)) {
      throw std::runtime_error(fmt::format("cannot reach {}: {}", where(q), errno_text(errno)));
    }
    keep_alive(fd, timeout_s);
  }
  // From every rank above this one: which rank each connection is comes in its first 4 bytes.
  for (int accepted = 0; accepted < size - 1 - rank;) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, ms_left(deadline)) <= 0) {
      if (clock_type::now() <= deadline) continue;
      std::vector<std::string> missing;
      for (int q = rank + 1; q < size; ++q)
        if (fds_[static_cast<std::size_t>(q)] < 0) missing.push_back(std::to_string(q));
      throw std::runtime_error(
          fmt::format("rank(s) {} did not connect within {:.0f} s", fmt::join(missing, ", "), timeout_s));
    }
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) continue;
    std::uint32_t word = 0;
    std::size_t got = 0;
    while (got < sizeof word && clock_type::now() <= deadline) {
      pollfd r{fd, POLLIN, 0};
      if (poll(&r, 1, ms_left(deadline)) <= 0) continue;
      const ssize_t n = recv(fd, reinterpret_cast<char*>(&word) + got, sizeof word - got, 0);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    const auto q = static_cast<int>(ntohl(word));
    if (got != sizeof word || q <= rank || q >= size || fds_[static_cast<std::size_t>(q)] >= 0) {
      close(fd);  // not one of the ranks expected (a stray connection): ignored
      continue;
    }
    keep_alive(fd, timeout_s);
    fds_[static_cast<std::size_t>(q)] = fd;
    ++accepted;
  }
  close(listen_fd_);
  listen_fd_ = -1;
}

std::vector<int> rank_links::ended() {
  std::vector<pollfd> polled;
  std::vector<int> ranks;
  for (std::size_t q = 0; q < fds_.size(); ++q) {
    if (fds_[q] < 0) continue;
    polled.push_back({fds_[q], POLLIN | POLLRDHUP, 0});
    ranks.push_back(static_cast<int>(q));
  }
  std::vector<int> out;
  if (polled.empty() || poll(polled.data(), polled.size(), 0) <= 0) return out;
  for (std::size_t i = 0; i < polled.size(); ++i) {
    if (polled[i].revents == 0) continue;
    char byte = 0;
    const ssize_t n = recv(polled[i].fd, &byte, 1, MSG_DONTWAIT);
    if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))) continue;  // still open
    close(polled[i].fd);
    fds_[static_cast<std::size_t>(ranks[i])] = -1;
    out.push_back(ranks[i]);
  }
  return out;
}

}  // namespace memlab
