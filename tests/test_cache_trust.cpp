// Which caches may put code (stored CUBINs) into the process, and that the caches tilemm creates
// are ones that may. Modes and owners are read with stat(), never by trying access(): CI runs as
// root, which access() lets through everywhere.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "cache_trust.hpp"
#include "private_paths.hpp"
#include "store_open.hpp"
#include "temp_dir.hpp"

namespace tilemm::cache {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

// Each mode the rule has to tell apart, and what it must say of it.
struct ModeCase {
  mode_t mode;
  bool trusted;
  const char* reason_end;  // how the reason ends when not trusted
};
const ModeCase kModes[] = {
    {0600, true, ""},
    {0644, true, ""},
    {0660, false, "is writable by its group"},
    {0666, false, "is writable by its group and by others"},
    {0700, true, ""},
    {0755, true, ""},
    {0775, false, "is writable by its group"},
    {0777, false, "is writable by its group and by others"},
    {0602, false, "is writable by others"},
};

mode_t mode_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) ADD_FAILURE() << "cannot stat " << path;
  return st.st_mode & 07777;
}

// Sets the umask for one test and restores the previous one.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : previous_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(previous_); }
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;

 private:
  mode_t previous_;
};

// ---- The rule without the disk -----------------------------------------------------------------

TEST(CacheTrustRule, AFileOrFolderIsTrustedOnlyWhenNeitherGroupNorOthersCanWriteIt) {
  const uid_t me = 1000;
  for (const auto& c : kModes) {
    for (const mode_t type : {S_IFREG, S_IFDIR}) {
      SCOPED_TRACE(std::to_string(c.mode) + (type == S_IFDIR ? " folder" : " file"));
      const std::vector<PathOwnership> paths = {{"/home/u/.cache/tilemm", me, S_IFDIR | 0700},
                                                {"/home/u/.cache/tilemm/tuning.db", me, type | c.mode}};
      const CacheTrust trust = decide_cache_trust(paths, me);
      EXPECT_EQ(trust.loads_stored_code, c.trusted);
      if (c.trusted) {
        EXPECT_EQ(trust.reason, "");
      } else {
        EXPECT_EQ(trust.reason, std::string("'/home/u/.cache/tilemm/tuning.db' ") + c.reason_end);
      }
    }
  }
}

TEST(CacheTrustRule, APathOwnedBySomeoneElseIsNotTrustedWhateverItsMode) {
  const uid_t me = 1000;
  for (const mode_t mode : {0600, 0644, 0700, 0755}) {
    const CacheTrust trust = decide_cache_trust({{"/srv/team", me, S_IFDIR | 0755},
                                                 {"/srv/team/tuning.db", kNobody, S_IFREG | mode}},
                                                me);
    EXPECT_FALSE(trust.loads_stored_code) << mode;
    EXPECT_EQ(trust.reason, "'/srv/team/tuning.db' is owned by uid 65534, not by you (uid 1000)");
  }
  const CacheTrust folder = decide_cache_trust(
      {{"/srv/team", kNobody, S_IFDIR | 0755}, {"/srv/team/tuning.db", me, S_IFREG | 0600}}, me);
  EXPECT_FALSE(folder.loads_stored_code);
  EXPECT_EQ(folder.reason, "'/srv/team' is owned by uid 65534, not by you (uid 1000)");
}

TEST(CacheTrustRule, RootsPathsAreTrustedLikeTheUsersOwn) {
  // A folder like /srv, owned by root and writable by no one else, holds a user's cache safely.
  const uid_t me = 1000;
  EXPECT_TRUE(decide_cache_trust({{"/srv", 0, S_IFDIR | 0755}, {"/srv/tuning.db", me, S_IFREG | 0600}}, me)
                  .loads_stored_code);
  const CacheTrust open_to_all = decide_cache_trust({{"/tmp", 0, S_IFDIR | 01777}}, me);
  EXPECT_FALSE(open_to_all.loads_stored_code);
  EXPECT_EQ(open_to_all.reason, "'/tmp' is writable by its group and by others");
}

// Above the folders that hold the cache, a folder writable by others is harmless with the sticky
// bit (no one renames what is not theirs, and the next folder is checked for its owner).
TEST(CacheTrustRule, AFolderOnTheWayMayBeOpenToAllOnlyWithTheStickyBit) {
  const uid_t me = 1000;
  const PathOwnership db = {"/tmp/mine/tuning.db", me, S_IFREG | 0600};
  const PathOwnership mine = {"/tmp/mine", me, S_IFDIR | 0700};
  EXPECT_TRUE(decide_cache_trust({db, mine, {"/tmp", 0, S_IFDIR | 01777, true}}, me).loads_stored_code);
  const CacheTrust open = decide_cache_trust({db, mine, {"/tmp", 0, S_IFDIR | 0777, true}}, me);
  EXPECT_FALSE(open.loads_stored_code);
  EXPECT_EQ(open.reason, "'/tmp' is writable by its group and by others (a folder on the way to the cache, without the sticky bit)");
  // The sticky bit does not make another user's folder ours, and does not help the folder that
  // holds the file, where side files are made.
  EXPECT_FALSE(decide_cache_trust({db, mine, {"/tmp", 2000, S_IFDIR | 01777, true}}, me).loads_stored_code);
  EXPECT_FALSE(decide_cache_trust({db, {"/tmp/mine", me, S_IFDIR | 01777}}, me).loads_stored_code);
}

TEST(CacheTrustRule, TheFirstOffendingPathIsNamedAndNoPathsTrustNothing) {
  const uid_t me = 1000;
  const CacheTrust trust = decide_cache_trust({{"/c", me, S_IFDIR | 0700},
                                               {"/c/tuning.db", me, S_IFREG | 0600},
                                               {"/c/tuning.db-wal", me, S_IFREG | 0666},
                                               {"/c/tuning.db-shm", me, S_IFREG | 0660}},
                                              me);
  EXPECT_FALSE(trust.loads_stored_code);
  EXPECT_EQ(trust.reason, "'/c/tuning.db-wal' is writable by its group and by others");
  EXPECT_FALSE(decide_cache_trust({}, me).loads_stored_code);
}

// ---- The rule over real files ------------------------------------------------------------------

// A private cache with an entry, closed (so without -wal and -shm files).
// Its path with links resolved, as cache_trust names it (the temporary folder may be a link).
std::string make_cache(const testing::TempDir& dir, const std::string& name = "tuning.db") {
  const std::string path = dir.file(name);
  {
    TuningStore store(path);
    store.put_cubin("sm_90", 1, "h", "naive", {'c'});
  }
  return fs::canonical(path).string();
}

TEST(CacheTrustOnDisk, ThePathsModesDecideForTheFileAndItsFolder) {
  testing::TempDir dir;  // mkdtemp: 0700, ours
  const std::string path = make_cache(dir);
  const std::string folder = fs::path(path).parent_path().string();
  EXPECT_TRUE(cache_trust(path).loads_stored_code) << cache_trust(path).reason;
  for (const auto& c : kModes) {
    SCOPED_TRACE(std::to_string(c.mode));
    ASSERT_EQ(::chmod(path.c_str(), c.mode), 0);
    CacheTrust trust = cache_trust(path);
    EXPECT_EQ(trust.loads_stored_code, c.trusted) << trust.reason;
    if (!c.trusted) {
      EXPECT_EQ(trust.reason, "'" + path + "' " + c.reason_end);
    }
    ASSERT_EQ(::chmod(path.c_str(), 0600), 0);

    ASSERT_EQ(::chmod(folder.c_str(), c.mode | 0700), 0);  // the test must still enter it
    trust = cache_trust(path);
    EXPECT_EQ(trust.loads_stored_code, c.trusted) << trust.reason;
    if (!c.trusted) {
      EXPECT_EQ(trust.reason, "'" + folder + "' " + c.reason_end);
    }
    ASSERT_EQ(::chmod(folder.c_str(), 0700), 0);
  }
}

TEST(CacheTrustOnDisk, SideFilesCountWhereTheyExist) {
  testing::TempDir dir;
  const std::string path = make_cache(dir);
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const std::string side = path + suffix;
    std::ofstream(side) << "";
    ASSERT_EQ(::chmod(side.c_str(), 0600), 0);
    EXPECT_TRUE(cache_trust(path).loads_stored_code) << cache_trust(path).reason;
    ASSERT_EQ(::chmod(side.c_str(), 0666), 0);
    const CacheTrust trust = cache_trust(path);
    EXPECT_FALSE(trust.loads_stored_code) << suffix;
    EXPECT_EQ(trust.reason, "'" + side + "' is writable by its group and by others");
    fs::remove(side);
  }
}

TEST(CacheTrustOnDisk, AFileOrFolderOwnedBySomeoneElseIsNotTrusted) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another owner (chown) needs root";
  testing::TempDir dir;
  const std::string path = make_cache(dir);
  const std::string folder = fs::path(path).parent_path().string();
  ASSERT_EQ(::chown(path.c_str(), kNobody, static_cast<gid_t>(-1)), 0);
  CacheTrust trust = cache_trust(path);
  EXPECT_FALSE(trust.loads_stored_code);
  EXPECT_EQ(trust.reason, "'" + path + "' is owned by uid 65534, not by you (uid 0)");
  ASSERT_EQ(::chown(path.c_str(), 0, static_cast<gid_t>(-1)), 0);
  EXPECT_TRUE(cache_trust(path).loads_stored_code);

  ASSERT_EQ(::chown(folder.c_str(), kNobody, static_cast<gid_t>(-1)), 0);
  trust = cache_trust(path);
  EXPECT_FALSE(trust.loads_stored_code);
  EXPECT_EQ(trust.reason, "'" + folder + "' is owned by uid 65534, not by you (uid 0)");
  ASSERT_EQ(::chown(folder.c_str(), 0, static_cast<gid_t>(-1)), 0);
}

TEST(CacheTrustOnDisk, ALinkIsJudgedByItsTargetAndByBothFolders) {
  testing::TempDir dir;
  fs::create_directory(dir.file("real"));
  fs::create_directory(dir.file("links"));
  ASSERT_EQ(::chmod(dir.file("real").c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir.file("links").c_str(), 0700), 0);
  const std::string target = make_cache(dir, "real/tuning.db");
  const std::string link = dir.file("links/tuning.db");
  fs::create_symlink(target, link);
  EXPECT_TRUE(cache_trust(link).loads_stored_code) << cache_trust(link).reason;

  // Whoever can write the link's folder can point the link at their own file.
  ASSERT_EQ(::chmod(dir.file("links").c_str(), 0777), 0);
  CacheTrust trust = cache_trust(link);
  EXPECT_FALSE(trust.loads_stored_code);
  EXPECT_EQ(trust.reason, "'" + dir.file("links") + "' is writable by its group and by others");
  ASSERT_EQ(::chmod(dir.file("links").c_str(), 0700), 0);

  // The target's folder and the target itself are where SQLite reads and writes.
  ASSERT_EQ(::chmod(dir.file("real").c_str(), 0770), 0);
  trust = cache_trust(link);
  EXPECT_FALSE(trust.loads_stored_code);
  EXPECT_EQ(trust.reason, "'" + fs::canonical(dir.file("real")).string() + "' is writable by its group");
  ASSERT_EQ(::chmod(dir.file("real").c_str(), 0700), 0);
  ASSERT_EQ(::chmod(target.c_str(), 0666), 0);
  EXPECT_FALSE(cache_trust(link).loads_stored_code);
}

// Whoever can write a folder above the cache's can rename the cache's folder and put another in
// its place, also after the check: every folder on the way counts.
TEST(CacheTrustOnDisk, EveryFolderOnTheWayCounts) {
  testing::TempDir dir;
  fs::create_directories(dir.file("gp/p"));
  ASSERT_EQ(::chmod(dir.file("gp/p").c_str(), 0700), 0);
  const std::string path = make_cache(dir, "gp/p/tuning.db");
  const std::string gp = fs::canonical(dir.file("gp")).string();
  for (const auto& [mode, trusted] : std::vector<std::pair<mode_t, bool>>{
           {0700, true}, {0755, true}, {0777, false}, {0770, false}, {01777, true}}) {
    SCOPED_TRACE(std::to_string(mode));
    ASSERT_EQ(::chmod(gp.c_str(), mode), 0);
    const CacheTrust trust = cache_trust(path);
    EXPECT_EQ(trust.loads_stored_code, trusted) << trust.reason;
    if (!trusted) {
      EXPECT_EQ(trust.reason.rfind("'" + gp + "' is writable by its group", 0), 0u) << trust.reason;
    }
  }
  ASSERT_EQ(::chmod(gp.c_str(), 0700), 0);
}

// A link to a link: the folder holding the second link is on the way too.
TEST(CacheTrustOnDisk, TheFoldersOfEveryLinkFollowedCount) {
  testing::TempDir dir;
  for (const char* folder : {"real", "first", "second"}) {
    fs::create_directory(dir.file(folder));
    ASSERT_EQ(::chmod(dir.file(folder).c_str(), 0700), 0);
  }
  const std::string target = make_cache(dir, "real/tuning.db");
  fs::create_symlink(target, dir.file("second/tuning.db"));
  fs::create_symlink(dir.file("second/tuning.db"), dir.file("first/tuning.db"));
  const std::string link = dir.file("first/tuning.db");
  EXPECT_TRUE(cache_trust(link).loads_stored_code) << cache_trust(link).reason;
  const std::string second = fs::canonical(dir.file("second")).string();
  ASSERT_EQ(::chmod(second.c_str(), 0777), 0);
  const CacheTrust trust = cache_trust(link);
  EXPECT_FALSE(trust.loads_stored_code);
  EXPECT_EQ(trust.reason.rfind("'" + second + "' is writable by its group and by others", 0), 0u) << trust.reason;
  ASSERT_EQ(::chmod(second.c_str(), 0700), 0);
  // A loop of links is refused, not followed for ever.
  fs::create_symlink(dir.file("loop_b"), dir.file("loop_a"));
  fs::create_symlink(dir.file("loop_a"), dir.file("loop_b"));
  EXPECT_FALSE(cache_trust(dir.file("loop_a")).loads_stored_code);
}

TEST(CacheTrustOnDisk, AMissingCacheIsNotTrusted) {
  testing::TempDir dir;
  const CacheTrust trust = cache_trust(dir.file("absent.db"));
  EXPECT_FALSE(trust.loads_stored_code);
  EXPECT_NE(trust.reason.find("absent.db"), std::string::npos) << trust.reason;
}

// ---- What tilemm creates -----------------------------------------------------------------------

TEST(PrivateCreation, ANewCacheIsOwnerOnlyEvenWithAnOpenUmask) {
  const ScopedUmask open_umask(0);
  testing::TempDir dir;
  const std::string path = dir.file("a/b/tuning.db");
  const OpenedStore opened = open_store(path);
  ASSERT_TRUE(opened.persistent) << opened.warning;
  opened.store->put_cubin("sm_90", 1, "h", "naive", {'c'});
  EXPECT_EQ(mode_of(dir.file("a")), 0700u);
  EXPECT_EQ(mode_of(dir.file("a/b")), 0700u);
  EXPECT_EQ(mode_of(path), 0600u);
  // SQLite makes its side files while the store is open, with the database's mode.
  ASSERT_TRUE(fs::exists(path + "-wal"));
  ASSERT_TRUE(fs::exists(path + "-shm"));
  EXPECT_EQ(mode_of(path + "-wal"), 0600u);
  EXPECT_EQ(mode_of(path + "-shm"), 0600u);
  EXPECT_TRUE(opened.code_trust.loads_stored_code) << opened.code_trust.reason;
}

TEST(PrivateCreation, TheUmaskStillNarrowsWhatIsCreated) {
  testing::TempDir dir;  // before the umask, which would narrow it too
  const ScopedUmask narrow(0277);  // not even the owner may write: the user's own choice
  create_private_folders(dir.file("x"));
  EXPECT_EQ(mode_of(dir.file("x")), 0500u);
  create_private_file(dir.file("f"));
  EXPECT_EQ(mode_of(dir.file("f")), 0400u);
}

TEST(PrivateCreation, AnExistingCacheAndFolderKeepTheirModes) {
  // A file the user points TILEMM_CACHE at may be a team's: tilemm never changes its modes.
  testing::TempDir dir;
  const std::string folder = dir.file("team");
  fs::create_directory(folder);
  ASSERT_EQ(::chmod(folder.c_str(), 0775), 0);
  const std::string path = make_cache(dir, "team/tuning.db");
  ASSERT_EQ(::chmod(path.c_str(), 0664), 0);
  const OpenedStore opened = open_store(path);
  ASSERT_TRUE(opened.persistent) << opened.warning;
  opened.store->put_cubin("sm_90", 1, "h", "naive", {'c'});
  EXPECT_EQ(mode_of(folder), 0775u);
  EXPECT_EQ(mode_of(path), 0664u);
  EXPECT_FALSE(opened.code_trust.loads_stored_code);
  EXPECT_EQ(opened.code_trust.reason, "'" + path + "' is writable by its group");
}

TEST(PrivateCreation, TheLockForMovingADamagedCacheAsideIsOwnerOnly) {
  const ScopedUmask open_umask(0);
  testing::TempDir dir;
  const std::string path = dir.file("tuning.db");
  {
    std::ofstream garbage(path);
    garbage << std::string(5000, 'g');
  }
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  const OpenedStore opened = open_store(path);
  ASSERT_TRUE(opened.persistent) << opened.warning;
  ASSERT_TRUE(fs::exists(path + ".lock"));
  EXPECT_EQ(mode_of(path + ".lock"), 0600u);
  EXPECT_EQ(mode_of(path), 0600u);  // the fresh store that replaced the damaged one
}

TEST(PrivateCreation, AnInMemoryStoreTrustsItsOwnCode) {
  testing::TempDir dir;
  std::ofstream(dir.file("not-a-folder")) << "x";  // nothing can be created below a file
  const OpenedStore opened = open_store(dir.file("not-a-folder/tuning.db"));
  ASSERT_FALSE(opened.persistent);
  EXPECT_TRUE(opened.code_trust.loads_stored_code);
}

TEST(PrivateCreation, CreatingIntoAFileFailsWithTheReason) {
  testing::TempDir dir;
  std::ofstream(dir.file("f")) << "x";
  try {
    create_private_folders(dir.file("f/sub"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cache);
    EXPECT_NE(std::string(e.what()).find(dir.file("f")), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tilemm::cache
