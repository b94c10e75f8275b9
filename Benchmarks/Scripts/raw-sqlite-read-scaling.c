// Raw SQLite floor for read scaling (docs/BENCHMARKS.md, Concurrency): 1 and 2 threads, a
// read-only connection each, SELECT of 1 KB rows by key from a 10,000-row WAL database.
//   gcc -O2 -o /tmp/raw-sqlite-read-scaling Benchmarks/Scripts/raw-sqlite-read-scaling.c -lsqlite3 -lpthread
//   /tmp/raw-sqlite-read-scaling /mnt/ext4/scale.db          # memory statistics on (SQLite default)
//   rm /mnt/ext4/scale.db*; /tmp/raw-sqlite-read-scaling /mnt/ext4/scale.db off   # off, as KVCache sets
#include <sqlite3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static const char *path; static int seconds = 2; static int memstatus_off = 0;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static void *worker(void *arg){
  long *count = arg; sqlite3 *db; sqlite3_stmt *st; char key[32];
  sqlite3_open_v2(path,&db,SQLITE_OPEN_READONLY|SQLITE_OPEN_NOMUTEX,0);
  sqlite3_exec(db,"PRAGMA cache_size=-16384",0,0,0);
  sqlite3_prepare_v2(db,"SELECT v FROM t WHERE k=?1",-1,&st,0);
  unsigned r = (unsigned)(size_t)count; double end = now()+seconds; long n=0;
  while (now() < end) { for (int i=0;i<100;i++){ r = r*1103515245u+12345u; snprintf(key,32,"key-%u",(r>>8)%10000);
    sqlite3_bind_text(st,1,key,-1,SQLITE_STATIC); if (sqlite3_step(st)!=SQLITE_ROW) abort(); sqlite3_reset(st); n++; } }
  *count = n; sqlite3_finalize(st); sqlite3_close(db); return 0; }
int main(int argc,char**argv){ path=argv[1]; memstatus_off = argc>2;
  if (memstatus_off) sqlite3_config(SQLITE_CONFIG_MEMSTATUS,0);
  sqlite3 *db; sqlite3_open(path,&db); sqlite3_exec(db,"PRAGMA page_size=16384; PRAGMA journal_mode=WAL; CREATE TABLE IF NOT EXISTS t(k TEXT PRIMARY KEY, v BLOB); BEGIN",0,0,0);
  sqlite3_stmt *ins; sqlite3_prepare_v2(db,"INSERT OR REPLACE INTO t VALUES(?1, zeroblob(1024))",-1,&ins,0); char key[32];
  for(int i=0;i<10000;i++){snprintf(key,32,"key-%d",i);sqlite3_bind_text(ins,1,key,-1,SQLITE_TRANSIENT);sqlite3_step(ins);sqlite3_reset(ins);}
  sqlite3_finalize(ins); sqlite3_exec(db,"COMMIT",0,0,0);
  for (int threads=1; threads<=2; threads++){ pthread_t th[4]; long counts[4]; double t0=now();
    for(int i=0;i<threads;i++){counts[i]=i+1;pthread_create(&th[i],0,worker,&counts[i]);}
    long total=0; for(int i=0;i<threads;i++){pthread_join(th[i],0); total+=counts[i];}
    printf("%d threads: %.0f reads/s\n", threads, total/(now()-t0)); }
  sqlite3_close(db); return 0; }
