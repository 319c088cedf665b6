/* Copy of ../shared/bench/baseline.c (the project's speed yardstick), kept in the repo so
 * that tests and benchmarks work in a clone without ../shared beside it. */
/* Reference generator + single_subset measure in C: the "same work, near the
 * machine's limit" anchor for the performance bar. Not bit-exact with the
 * project (own SplitMix64 stream); same algorithm and same statistics.
 * usage: refgen W H DENSITY TARGET CAP ATTEMPTS BOARDS [SHAVE_R]
 * prints: boards, passed, mean attempts, seconds, boards/s */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <math.h>

#define MAXC 16384 /* cells: 128x128 (the shared copy has 4096, 64x64) */
static int W, H, NC;
static unsigned char mine[MAXC], num[MAXC], rev[MAXC], known[MAXC];
static int nb[MAXC][8], nbn[MAXC];
static uint64_t st;
static uint64_t sm64(void) { uint64_t z = (st += 0x9E3779B97F4A7C15ULL); z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL; z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL; return z ^ (z >> 31); }
static int q[MAXC];

static int flood_from(int *start, int ns) { /* reveal + chain; returns newly revealed */
  int qh = 0, qt = 0, added = 0;
  for (int i = 0; i < ns; i++) { int c = start[i]; if (!rev[c]) { rev[c] = 1; added++; if (!num[c]) q[qt++] = c; } }
  while (qh < qt) { int c = q[qh++]; for (int k = 0; k < nbn[c]; k++) { int n = nb[c][k]; if (!rev[n]) { rev[n] = 1; added++; if (!num[n]) q[qt++] = n; } } }
  return added;
}
typedef struct { int cells[8]; int n, m; } Con;
static Con con[MAXC]; static int ncon;
static int conof[MAXC][8], nconof[MAXC];
static int is_subset(Con *a, Con *b) { /* a strictly inside b; cells sorted */
  if (a->n >= b->n) return 0;
  int j = 0;
  for (int i = 0; i < a->n; i++) { while (j < b->n && b->cells[j] < a->cells[i]) j++; if (j == b->n || b->cells[j] != a->cells[i]) return 0; j++; }
  return 1;
}
static int newsafe[MAXC], nns;
static unsigned char mark[MAXC];
static int closure(void) {
  for (;;) {
    ncon = 0; memset(nconof, 0, sizeof(int) * NC);
    for (int c = 0; c < NC; c++) if (rev[c] && num[c]) {
      Con *k = &con[ncon]; k->n = 0; k->m = num[c];
      for (int i = 0; i < nbn[c]; i++) { int n = nb[c][i]; if (known[n]) k->m--; else if (!rev[n]) k->cells[k->n++] = n; }
      if (k->n) { for (int i = 0; i < k->n; i++) { int n = k->cells[i]; if (nconof[n] < 8) conof[n][nconof[n]++] = ncon; } ncon++; }
    }
    nns = 0; int newmine = 0;
    memset(mark, 0, NC);
    for (int i = 0; i < ncon; i++) {
      Con *a = &con[i];
      if (a->m == 0) { for (int t = 0; t < a->n; t++) if (!mark[a->cells[t]]) { mark[a->cells[t]] = 1; newsafe[nns++] = a->cells[t]; } }
      else if (a->m == a->n) { for (int t = 0; t < a->n; t++) if (!known[a->cells[t]]) { known[a->cells[t]] = 1; newmine++; } }
      else for (int t = 0; t < a->n; t++) { int cell = a->cells[t];
        for (int u = 0; u < nconof[cell]; u++) { Con *b = &con[conof[cell][u]]; if (b == a || !is_subset(a, b)) continue;
          int d = b->m - a->m, dn = b->n - a->n; if (d != 0 && d != dn) continue;
          int j = 0; for (int s = 0; s < b->n; s++) { int x = b->cells[s]; while (j < a->n && a->cells[j] < x) j++; if (j < a->n && a->cells[j] == x) continue;
            if (d == 0) { if (!mark[x]) { mark[x] = 1; newsafe[nns++] = x; } } else if (!known[x]) { known[x] = 1; newmine++; } } } }
    }
    int added = nns ? flood_from(newsafe, nns) : 0;
    if (!added && !newmine) return 0;
  }
}
static int unreachable(void) {
  static unsigned char seen[MAXC]; memset(seen, 0, NC); int qh = 0, qt = 0, cnt = 0;
  int cx = (W - 1) / 2, cy = (H - 1) / 2; int c0 = cy * W + cx; seen[c0] = 1; q[qt++] = c0;
  while (qh < qt) { int c = q[qh++]; cnt++; for (int k = 0; k < nbn[c]; k++) { int n = nb[c][k]; if (!mine[n] && !seen[n]) { seen[n] = 1; q[qt++] = n; } } }
  int safe = 0; for (int c = 0; c < NC; c++) safe += !mine[c];
  return safe - cnt;
}
static void setup(void) {
  NC = W * H;
  for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) { int c = y * W + x; nbn[c] = 0;
    for (int dy = -1; dy <= 1; dy++) for (int dx = -1; dx <= 1; dx++) { if (!dx && !dy) continue; int nx = x + dx, ny = y + dy;
      if (nx >= 0 && ny >= 0 && nx < W && ny < H) nb[c][nbn[c]++] = ny * W + nx; } }
}
/* measure mode: one '/'-joined layout per stdin line -> "r0 revealed safe unreachable" */
static int measure_mode(void) {
  static char line[MAXC * 2];
  while (fgets(line, sizeof line, stdin)) {
    int len = strcspn(line, "\r\n"); line[len] = 0; if (!len) continue;
    W = strcspn(line, "/"); H = 0; int c = 0;
    if (len > MAXC + 64) continue;
    for (int i = 0; i < len; i++) { if (line[i] == '/') { H++; continue; } mine[c++] = line[i] == '*'; }
    H++; if (W <= 0 || W * H > MAXC) continue; setup();
    int cx = (W - 1) / 2, cy = (H - 1) / 2, spawn[9], ns = 0, safe = 0;
    for (int y = cy - 1; y <= cy + 1; y++) for (int x = cx - 1; x <= cx + 1; x++) spawn[ns++] = y * W + x;
    for (int k = 0; k < NC; k++) { int n = 0; for (int t = 0; t < nbn[k]; t++) n += mine[nb[k][t]]; num[k] = n; safe += !mine[k]; }
    memset(rev, 0, NC); memset(known, 0, NC);
    int r0 = flood_from(spawn, ns); closure();
    int R = 0; for (int k = 0; k < NC; k++) R += rev[k];
    printf("%d %d %d %d\n", r0, R, safe, unreachable());
  }
  return 0;
}
int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "measure")) return measure_mode();
  if (argc < 8) { fprintf(stderr, "usage\n"); return 2; }
  W = atoi(argv[1]); H = atoi(argv[2]); double d = atof(argv[3]), target = atof(argv[4]);
  int cap = atoi(argv[5]), att = atoi(argv[6]), boards = atoi(argv[7]), r = argc > 8 ? atoi(argv[8]) : 1;
  NC = W * H; int cx = (W - 1) / 2, cy = (H - 1) / 2;
  for (int y = 0; y < H; y++) for (int x = 0; x < W; x++) { int c = y * W + x; nbn[c] = 0;
    for (int dy = -1; dy <= 1; dy++) for (int dx = -1; dx <= 1; dx++) { if (!dx && !dy) continue; int nx = x + dx, ny = y + dy;
      if (nx >= 0 && ny >= 0 && nx < W && ny < H) nb[c][nbn[c]++] = ny * W + nx; } }
  static int cand[MAXC]; int nc = 0, spawn[9], ns = 0;
  for (int c = 0; c < NC; c++) { int x = c % W, y = c / W; if (abs(x - cx) <= 1 && abs(y - cy) <= 1) spawn[ns++] = c; else cand[nc++] = c; }
  int N = (int)floor(d * (NC - 9) + 0.5);
  struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
  long passed = 0, attempts = 0; st = 12345;
  for (int b = 0; b < boards; b++) {
    for (int k = 1; k <= att; k++) {
      attempts++;
      memset(mine, 0, NC);
      for (int i = 0; i < N; i++) { int j = i + (int)(sm64() % (uint64_t)(nc - i)); int t = cand[i]; cand[i] = cand[j]; cand[j] = t; }
      for (int i = 0; i < N; i++) { int c = cand[i], x = c % W, y = c / W; if (abs(x - cx) > 1 + r || abs(y - cy) > 1 + r) mine[c] = 1; }
      int safe = 0;
      for (int c = 0; c < NC; c++) { int n = 0; for (int t = 0; t < nbn[c]; t++) n += mine[nb[c][t]]; num[c] = n; safe += !mine[c]; }
      memset(rev, 0, NC); memset(known, 0, NC);
      int r0 = flood_from(spawn, ns);
      if (r0 > cap || r0 == safe || unreachable()) continue;
      closure();
      int R = 0; for (int c = 0; c < NC; c++) R += rev[c];
      if ((double)R >= target * safe) { passed++; break; }
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf("boards=%d passed=%ld mean_attempts=%.2f seconds=%.3f boards_per_s=%.0f\n", boards, passed, (double)attempts / boards, s, boards / s);
  return 0;
}
