// amq/file_io.hpp: write_file_atomic through links, keeping mode and honouring the
// umask; FileLock's exclusion, timeout and hand-over across a replacement by rename.
#include "amq/file_io.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "amq/error.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("amq_file_io_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static void put(const std::string& p, std::string_view text) {
    amq::write_file_atomic(p, std::as_bytes(std::span(text.data(), text.size())));
  }
  static std::string get(const std::string& p) {
    const auto b = amq::read_file(p);
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }
  static unsigned mode(const std::string& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0);
    return st.st_mode & 07777;
  }
  fs::path dir_;
};

TEST_F(FileIoTest, WriteFollowsLinksAndKeepsMode) {
  fs::create_directories(dir_ / "sub");
  put(path("sub/t"), "one");
  fs::create_symlink("sub/t", dir_ / "l");
  fs::create_symlink("l", dir_ / "ll");
  ::chmod(path("sub/t").c_str(), 0640);
  put(path("ll"), "two");
  EXPECT_TRUE(fs::is_symlink(dir_ / "l"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "ll"));
  EXPECT_EQ(get(path("sub/t")), "two");
  EXPECT_EQ(mode(path("sub/t")), 0640u);
  EXPECT_EQ(amq::resolve_links(path("ll")), path("sub/t"));
}

TEST_F(FileIoTest, NewFileHonoursUmask) {
  const mode_t old = ::umask(027);
  put(path("n"), "x");
  ::umask(old);
  EXPECT_EQ(mode(path("n")), 0640u);
}

TEST_F(FileIoTest, LockTimesOutWhileHeld) {
  put(path("f"), "x");
  amq::FileLock a(path("f"));
  try {
    amq::FileLock b(path("f"), 20ms);
    FAIL() << "second lock acquired";
  } catch (const amq::Error& e) {
    EXPECT_EQ(e.code(), amq::Errc::locked);
    EXPECT_EQ(std::string(e.what()), path("f") + ": locked by another writer");
  }
  a = amq::FileLock();
  EXPECT_NO_THROW(amq::FileLock(path("f"), 0ms));
}

TEST_F(FileIoTest, LockMissingFileIsNotFound) {
  try {
    amq::FileLock a(path("missing"));
    FAIL();
  } catch (const amq::Error& e) {
    EXPECT_EQ(e.code(), amq::Errc::not_found);
  }
}

// A writer waiting on the file that its predecessor replaced must end up holding the
// new file's lock, or a third writer could run beside it.
TEST_F(FileIoTest, WaiterLocksTheReplacement) {
  put(path("f"), "old");
  amq::FileLock first(path("f"));
  std::atomic<bool> acquired{false};
  amq::FileLock second;
  std::thread waiter([&] {
    second = amq::FileLock(path("f"));
    acquired = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(acquired.load());
  put(path("f"), "new");  // the first writer replaces the file, then unlocks
  first = amq::FileLock();
  waiter.join();
  ASSERT_TRUE(second.locked());
  EXPECT_THROW(amq::FileLock(path("f"), 0ms), amq::Error);
}

}  // namespace
