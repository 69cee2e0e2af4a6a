// The Java half of amq's Guava cross-check (driven by tests/guava_test.sh).
//
//   java GuavaCheck gen DIR
//       Builds Guava Bloom filters (several n and fpp; UTF-8 string, long and byte-array
//       funnels; a filter filled 10x past its expected insertions; MURMUR128_MITZ_32 as
//       well as MITZ_64) and writes, per filter NAME:
//         NAME.guava   BloomFilter.writeTo
//         NAME.keys    "changed<TAB>key" per inserted key (put()'s answer)
//         NAME.probes  "answer<TAB>key" for present and absent keys (mightContain)
//       and, for filters whose keys are all plain text lines, the same keys as the CLI
//       reads them: NAME.lines (the inserted keys), NAME.probe.lines, NAME.probe.yes
//       (the probes Guava answered true, in order). DIR/manifest.tsv lists the filters:
//         name funnel strategy n fpp inserted linesafe expectedFpp approxCount
//       (approxCount "overflow" where approximateElementCount() throws: every bit set)
//       DIR/murmur3.tsv holds "seed<TAB>input<TAB>hash" for Hashing.murmur3_128(seed),
//       the hash as HashCode.asBytes(). Keys of the str and bytes funnels are written as
//       the hex of their bytes (UTF-8 for strings), long keys as unsigned decimal.
//       DIR/fresh_{str,u64,hex}.lines and .probe.lines are keys no Guava filter holds,
//       for amq to build filters from.
//   java GuavaCheck check DIR
//       Reads DIR/manifest.tsv (same columns, written by amq) and, for each filter,
//       BloomFilter.readFrom(NAME.guava) must answer every line of NAME.probes as amq did.
//   java GuavaCheck checklines FILE TYPE PROBE_LINES YES_LINES
//       readFrom(FILE) with TYPE's funnel (str, u64, hex); the probes it answers true
//       must be exactly the lines of YES_LINES, in order (what `amq query` printed).
//
// Every mismatch is printed; the exit status is 1 if there was any.
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import com.google.common.hash.Hashing;
import java.io.BufferedWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

public final class GuavaCheck {
  private static int failures = 0;

  private static void fail(String msg) {
    if (failures < 50) System.err.println("MISMATCH: " + msg);
    ++failures;
  }

  // ---- keys and their text forms --------------------------------------------------

  enum FunnelKind { str, u64, bytes }

  @SuppressWarnings("unchecked")
  static Funnel<Object> funnel(FunnelKind f) {
    switch (f) {
      case str: return (Funnel<Object>) (Funnel<?>) Funnels.stringFunnel(StandardCharsets.UTF_8);
      case u64: return (Funnel<Object>) (Funnel<?>) Funnels.longFunnel();
      default: return (Funnel<Object>) (Funnel<?>) Funnels.byteArrayFunnel();
    }
  }

  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder(b.length * 2);
    for (byte x : b) s.append(Character.forDigit((x >> 4) & 15, 16)).append(Character.forDigit(x & 15, 16));
    return s.toString();
  }

  static byte[] unhex(String s) {
    if (s.length() % 2 != 0) throw new IllegalArgumentException("odd hex: " + s);
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; ++i)
      b[i] = (byte) ((Character.digit(s.charAt(2 * i), 16) << 4) | Character.digit(s.charAt(2 * i + 1), 16));
    return b;
  }

  // The manifest / .keys / .probes encoding.
  static String encode(FunnelKind f, Object key) {
    switch (f) {
      case str: return hex(((String) key).getBytes(StandardCharsets.UTF_8));
      case u64: return Long.toUnsignedString((Long) key);
      default: return hex((byte[]) key);
    }
  }

  static Object decode(FunnelKind f, String s) {
    switch (f) {
      case str: return new String(unhex(s), StandardCharsets.UTF_8);
      case u64: return Long.parseUnsignedLong(s);
      default: return unhex(s);
    }
  }

  // The CLI's line form: str as the text, u64 as unsigned decimal, bytes as hex.
  static String line(FunnelKind f, Object key) {
    return f == FunnelKind.str ? (String) key : encode(f, key);
  }

  static boolean lineSafe(FunnelKind f, Object key) {
    if (f != FunnelKind.str) return true;
    String s = (String) key;
    // A line is a key without "\n"; a trailing "\r" is stripped; bytes must survive
    // the UTF-8 round trip (no unpaired surrogates).
    return s.indexOf('\n') < 0 && s.indexOf('\r') < 0
        && new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8).equals(s);
  }

  private static final String[] PIECES = {
    "a", "b", "z", "Q", "0", "9", " ", "-", "_", ".", "é", "ß", "ñ", "Ω", "ж", "中", "文", "日本語",
    "한", "😀", "🎉", "𝄞", "\u00a0", "\t", "ü", "€"
  };

  // A random string of 0..maxPieces pieces: ASCII, Latin-1, BMP CJK, astral emoji.
  static String randomString(Random rng, int maxPieces) {
    int n = rng.nextInt(maxPieces + 1);
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < n; ++i) s.append(PIECES[rng.nextInt(PIECES.length)]);
    return s.toString();
  }

  static String longString(Random rng, int utf8Bytes) {
    StringBuilder s = new StringBuilder();
    int bytes = 0;
    while (bytes < utf8Bytes) {
      String p = PIECES[rng.nextInt(PIECES.length)];
      if (p.equals("\t")) p = "x";
      s.append(p);
      bytes += p.getBytes(StandardCharsets.UTF_8).length;
    }
    return s.toString();
  }

  static List<Object> stringKeys(long seed, int count, String prefix) {
    Random rng = new Random(seed);
    LinkedHashSet<Object> keys = new LinkedHashSet<>();
    if (prefix.isEmpty()) {
      for (String s : new String[] {"", "é", "中文", "😀", "naïve café", "日本語テキスト", "emoji 🎉🎉 party", "a\tb",
                                     " leading", "trailing ", "ﬁ ligature", "Ωmega"}) {
        if (keys.size() < count) keys.add(s);
      }
    }
    int i = 0;
    while (keys.size() < count) {
      String s = (i % 3 == 0) ? prefix + "key-" + i : prefix + randomString(rng, 12);
      keys.add(s);
      ++i;
    }
    return new ArrayList<>(keys);
  }

  static List<Object> longKeys(long seed, int count) {
    Random rng = new Random(seed);
    LinkedHashSet<Object> keys = new LinkedHashSet<>();
    for (long v : new long[] {0L, 1L, -1L, Long.MIN_VALUE, Long.MAX_VALUE, 42L, 1L << 32}) {
      if (keys.size() < count) keys.add(v);
    }
    while (keys.size() < count) keys.add(rng.nextInt(4) == 0 ? (long) rng.nextInt(1 << 20) : rng.nextLong());
    return new ArrayList<>(keys);
  }

  static List<Object> byteKeys(long seed, int count) {
    Random rng = new Random(seed);
    List<Object> keys = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    while (keys.size() < count) {
      byte[] b = new byte[rng.nextInt(40)];
      rng.nextBytes(b);
      if (seen.add(hex(b))) keys.add(b);
    }
    return keys;
  }

  // `count` keys of the same kind as `present` that are not in it.
  static List<Object> absentKeys(FunnelKind f, List<Object> present, long seed, int count) {
    Set<String> have = new HashSet<>();
    for (Object k : present) have.add(encode(f, k));
    List<Object> candidates;
    switch (f) {
      case str: candidates = stringKeys(seed, count + present.size(), "absent:"); break;
      case u64: candidates = longKeys(seed, count + present.size()); break;
      default: candidates = byteKeys(seed, count + present.size()); break;
    }
    List<Object> out = new ArrayList<>();
    for (Object k : candidates) {
      if (out.size() == count) break;
      if (!have.contains(encode(f, k))) out.add(k);
    }
    return out;
  }

  // ---- gen --------------------------------------------------------------------------

  static Object strategy(int ordinal) throws Exception {
    Class<?> c = Class.forName("com.google.common.hash.BloomFilterStrategies");
    return c.getEnumConstants()[ordinal];
  }

  // BloomFilter.create(funnel, n, fpp, strategy) is package-private; reached by reflection.
  static BloomFilter<Object> create(FunnelKind f, long n, double fpp, int ordinal) throws Exception {
    if (ordinal == 1) return BloomFilter.create(funnel(f), n, fpp);
    Class<?> strategyInterface = Class.forName("com.google.common.hash.BloomFilter$Strategy");
    Method m = BloomFilter.class.getDeclaredMethod("create", Funnel.class, long.class, double.class, strategyInterface);
    m.setAccessible(true);
    @SuppressWarnings("unchecked")
    BloomFilter<Object> bf = (BloomFilter<Object>) m.invoke(null, funnel(f), n, fpp, strategy(ordinal));
    return bf;
  }

  static void writeLines(Path p, List<String> lines) throws IOException {
    try (BufferedWriter w = Files.newBufferedWriter(p, StandardCharsets.UTF_8)) {
      for (String s : lines) {
        w.write(s);
        w.write('\n');
      }
    }
  }

  static void genFilter(Path dir, List<String> manifest, String name, FunnelKind f, int ordinal, long n, double fpp,
                        List<Object> keys, int absent) throws Exception {
    BloomFilter<Object> bf = create(f, n, fpp, ordinal);
    List<String> keyLines = new ArrayList<>();
    for (Object k : keys) keyLines.add((bf.put(k) ? "1" : "0") + "\t" + encode(f, k));
    try (OutputStream out = Files.newOutputStream(dir.resolve(name + ".guava"))) {
      bf.writeTo(out);
    }
    byte[] written = Files.readAllBytes(dir.resolve(name + ".guava"));
    if (written[0] != ordinal) throw new IllegalStateException(name + ": strategy ordinal " + written[0]);

    List<Object> probes = new ArrayList<>(keys);
    probes.addAll(absentKeys(f, keys, n * 31 + absent, absent));
    List<String> probeLines = new ArrayList<>();
    for (Object k : probes) probeLines.add((bf.mightContain(k) ? "1" : "0") + "\t" + encode(f, k));
    writeLines(dir.resolve(name + ".keys"), keyLines);
    writeLines(dir.resolve(name + ".probes"), probeLines);

    boolean safe = true;
    for (Object k : probes) safe &= lineSafe(f, k);
    if (safe) {
      List<String> lines = new ArrayList<>(), plines = new ArrayList<>(), yes = new ArrayList<>();
      for (Object k : keys) lines.add(line(f, k));
      for (Object k : probes) {
        plines.add(line(f, k));
        if (bf.mightContain(k)) yes.add(line(f, k));
      }
      writeLines(dir.resolve(name + ".lines"), lines);
      writeLines(dir.resolve(name + ".probe.lines"), plines);
      writeLines(dir.resolve(name + ".probe.yes"), yes);
    }
    manifest.add(String.join("\t", name, f.name(), Integer.toString(ordinal), Long.toString(n), Double.toString(fpp),
        Integer.toString(keys.size()), safe ? "1" : "0", Double.toString(bf.expectedFpp()),
        approximateCount(bf)));
  }

  // approximateElementCount(), or "overflow" where Guava throws (every bit set).
  static String approximateCount(BloomFilter<Object> bf) {
    try {
      return Long.toString(bf.approximateElementCount());
    } catch (ArithmeticException e) {
      return "overflow";
    }
  }

  static void gen(Path dir) throws Exception {
    Files.createDirectories(dir);
    List<String> m = new ArrayList<>();
    final FunnelKind S = FunnelKind.str, L = FunnelKind.u64, B = FunnelKind.bytes;
    // Several n and fpp, string keys with non-ASCII characters and the empty string.
    genFilter(dir, m, "str_n1000_default", S, 1, 1000, 0.03, stringKeys(1, 1000, ""), 5000);
    genFilter(dir, m, "str_n100_p0.01", S, 1, 100, 0.01, stringKeys(2, 100, ""), 5000);
    genFilter(dir, m, "str_n0_default", S, 1, 0, 0.03, stringKeys(3, 1, ""), 200);
    genFilter(dir, m, "str_n1_p0.5", S, 1, 1, 0.5, stringKeys(4, 1, "one:"), 200);
    genFilter(dir, m, "str_n10_p0.5", S, 1, 10, 0.5, stringKeys(5, 10, ""), 500);
    genFilter(dir, m, "str_n5000_p1e-6", S, 1, 5000, 1e-6, stringKeys(6, 5000, ""), 5000);
    genFilter(dir, m, "str_n100000_p0.001", S, 1, 100000, 0.001, stringKeys(7, 100000, ""), 50000);
    genFilter(dir, m, "str_n3000_p0.2", S, 1, 3000, 0.2, stringKeys(8, 3000, ""), 5000);
    // Filled 10x past its expected insertions: many absent probes answer true.
    genFilter(dir, m, "str_overfilled_10x", S, 1, 1000, 0.01, stringKeys(9, 10000, ""), 10000);
    // Long keys: around the 16-byte block boundaries, and 10 KB.
    {
      Random rng = new Random(10);
      List<Object> keys = new ArrayList<>();
      for (int len = 1; len <= 70; ++len) keys.add(longString(rng, len) + "#" + len);
      for (int i = 0; i < 40; ++i) keys.add(longString(rng, 10240) + "#" + i);
      genFilter(dir, m, "str_long_keys", S, 1, 200, 0.01, keys, 60);
    }
    // Keys that are not lines: newlines, carriage returns, NUL, an unpaired surrogate.
    {
      List<Object> keys = new ArrayList<>(List.of("a\nb", "ends in CR\r", "\r\n", "\n", "nul\u0000byte",
          "lone \uD800 surrogate", "\u0000", "plain"));
      genFilter(dir, m, "str_control_chars", S, 1, 50, 0.01, keys, 300);
    }
    // longFunnel (8 little-endian bytes), including negative longs (unsigned >= 2^63).
    genFilter(dir, m, "u64_n10000_p0.01", L, 1, 10000, 0.01, longKeys(11, 10000), 20000);
    genFilter(dir, m, "u64_n777_p0.05", L, 1, 777, 0.05, longKeys(12, 777), 5000);
    genFilter(dir, m, "u64_overfilled_10x", L, 1, 500, 0.03, longKeys(13, 5000), 5000);
    // byteArrayFunnel: raw bytes, including "\n" and NUL.
    genFilter(dir, m, "bytes_n2000_p0.02", B, 1, 2000, 0.02, byteKeys(14, 2000), 5000);
    // MURMUR128_MITZ_32 (ordinal 0), the strategy of old Guava files.
    genFilter(dir, m, "mitz32_str_n1000_p0.01", S, 0, 1000, 0.01, stringKeys(15, 1000, ""), 5000);
    genFilter(dir, m, "mitz32_u64_n5000_p0.001", L, 0, 5000, 0.001, longKeys(16, 5000), 5000);
    genFilter(dir, m, "mitz32_str_overfilled_10x", S, 0, 300, 0.03, stringKeys(17, 3000, ""), 5000);
    genFilter(dir, m, "mitz32_bytes_n100_p1e-4", B, 0, 100, 1e-4, byteKeys(18, 100), 2000);
    writeLines(dir.resolve("manifest.tsv"), m);

    // murmur3_128 outputs.
    List<String> mm = new ArrayList<>();
    List<byte[]> inputs = new ArrayList<>();
    for (int len = 0; len <= 64; ++len) {
      byte[] b = new byte[len];
      for (int i = 0; i < len; ++i) b[i] = (byte) (i * 37 + len * 11 + 0x80);
      inputs.add(b);
    }
    for (String s : new String[] {"hello", "The quick brown fox jumps over the lazy dog", "é", "中文", "😀"})
      inputs.add(s.getBytes(StandardCharsets.UTF_8));
    Random rng = new Random(19);
    for (int i = 0; i < 60; ++i) {
      byte[] b = new byte[rng.nextInt(3000)];
      rng.nextBytes(b);
      inputs.add(b);
    }
    for (int seed : new int[] {0, 1, 42, 0x7fffffff, -1, 0x9747b28c, Integer.MIN_VALUE}) {
      for (byte[] b : inputs) {
        mm.add(seed + "\t" + hex(b) + "\t" + hex(Hashing.murmur3_128(seed).hashBytes(b).asBytes()));
      }
    }
    writeLines(dir.resolve("murmur3.tsv"), mm);

    // Fresh keys for filters built by amq (Guava never sees them until it checks).
    List<String> a = new ArrayList<>(), b = new ArrayList<>();
    for (Object k : stringKeys(20, 3000, "fresh:")) a.add((String) k);
    for (Object k : stringKeys(21, 6000, "fresh-probe:")) b.add((String) k);
    b.addAll(a.subList(0, 1000));
    writeLines(dir.resolve("fresh_str.lines"), a);
    writeLines(dir.resolve("fresh_str.probe.lines"), b);
    a.clear();
    b.clear();
    for (Object k : longKeys(22, 3000)) a.add(line(L, k));
    for (Object k : absentKeys(L, longKeys(22, 3000), 23, 6000)) b.add(line(L, k));
    b.addAll(a.subList(0, 1000));
    writeLines(dir.resolve("fresh_u64.lines"), a);
    writeLines(dir.resolve("fresh_u64.probe.lines"), b);
    a.clear();
    b.clear();
    for (Object k : byteKeys(24, 3000)) a.add(line(B, k));
    for (Object k : absentKeys(B, byteKeys(24, 3000), 25, 6000)) b.add(line(B, k));
    b.addAll(a.subList(0, 1000));
    writeLines(dir.resolve("fresh_hex.lines"), a);
    writeLines(dir.resolve("fresh_hex.probe.lines"), b);
    System.out.println("guava: wrote " + m.size() + " filters, " + mm.size() + " murmur3 hashes to " + dir);
  }

  // ---- check ------------------------------------------------------------------------

  static BloomFilter<Object> read(Path p, FunnelKind f) throws IOException {
    try (InputStream in = Files.newInputStream(p)) {
      return BloomFilter.readFrom(in, funnel(f));
    }
  }

  static void check(Path dir) throws Exception {
    int filters = 0;
    long probes = 0;
    for (String row : Files.readAllLines(dir.resolve("manifest.tsv"), StandardCharsets.UTF_8)) {
      if (row.isEmpty()) continue;
      String[] c = row.split("\t", -1);
      String name = c[0];
      FunnelKind f = FunnelKind.valueOf(c[1]);
      byte[] file = Files.readAllBytes(dir.resolve(name + ".guava"));
      if (file.length < 1 || file[0] != Integer.parseInt(c[2])) fail(name + ": strategy ordinal is not " + c[2]);
      BloomFilter<Object> bf = read(dir.resolve(name + ".guava"), f);
      ByteArrayOutputStream again = new ByteArrayOutputStream();
      bf.writeTo(again);
      if (!java.util.Arrays.equals(again.toByteArray(), file)) fail(name + ": Guava rewrites amq's file differently");
      int line = 0;
      for (String p : Files.readAllLines(dir.resolve(name + ".probes"), StandardCharsets.UTF_8)) {
        ++line;
        if (p.isEmpty()) continue;
        int tab = p.indexOf('\t');
        boolean amq = p.charAt(0) == '1';
        boolean guava = bf.mightContain(decode(f, p.substring(tab + 1)));
        if (amq != guava)
          fail(name + ".probes:" + line + ": key " + p.substring(tab + 1) + ": amq says " + amq + ", Guava " + guava);
        ++probes;
      }
      if (c.length > 8 && !approximateCount(bf).equals(c[8]))
        fail(name + ": approximateElementCount " + approximateCount(bf) + ", amq " + c[8]);
      ++filters;
    }
    System.out.println("guava: read " + filters + " amq-written filters, " + probes + " probes");
  }

  static List<String> cliLines(Path p) throws IOException {
    String all = new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
    List<String> out = new ArrayList<>();
    int at = 0;
    while (at < all.length()) {
      int nl = all.indexOf('\n', at);
      String l = nl < 0 ? all.substring(at) : all.substring(at, nl);
      if (l.endsWith("\r")) l = l.substring(0, l.length() - 1);
      out.add(l);
      at = nl < 0 ? all.length() : nl + 1;
    }
    return out;
  }

  static void checkLines(Path file, String type, Path probeLines, Path yesLines) throws Exception {
    FunnelKind f = type.equals("str") ? FunnelKind.str : type.equals("u64") ? FunnelKind.u64 : FunnelKind.bytes;
    BloomFilter<Object> bf = read(file, f);
    List<String> expected = new ArrayList<>();
    List<String> probes = cliLines(probeLines);
    for (String l : probes) {
      Object key = f == FunnelKind.str ? l : decode(f, l);
      if (bf.mightContain(key)) expected.add(l);
    }
    List<String> got = cliLines(yesLines);
    if (!expected.equals(got)) {
      int i = 0;
      while (i < expected.size() && i < got.size() && expected.get(i).equals(got.get(i))) ++i;
      fail(file + ": amq query printed " + got.size() + " keys, Guava answers true for " + expected.size()
          + "; first difference at output line " + (i + 1) + ": amq '"
          + (i < got.size() ? got.get(i) : "<end>") + "', Guava '" + (i < expected.size() ? expected.get(i) : "<end>")
          + "'");
    }
    System.out.println("guava: " + file.getFileName() + ": " + probes.size() + " probes, " + expected.size()
        + " answered true by both");
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 2 && args[0].equals("gen")) {
      gen(Paths.get(args[1]));
    } else if (args.length == 2 && args[0].equals("check")) {
      check(Paths.get(args[1]));
    } else if (args.length == 5 && args[0].equals("checklines")) {
      checkLines(Paths.get(args[1]), args[2], Paths.get(args[3]), Paths.get(args[4]));
    } else {
      System.err.println("usage: GuavaCheck gen DIR | check DIR | checklines FILE TYPE PROBE_LINES YES_LINES");
      System.exit(2);
    }
    if (failures > 0) {
      System.err.println("guava: " + failures + " mismatches");
      System.exit(1);
    }
  }
}
