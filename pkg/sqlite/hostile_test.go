package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/opmkit/opm/pkg/sqlite"
)

// exec runs statements on the database at path, as whoever crafted it.
func exec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestHostile renders crafted databases: each gets a clear error naming
// the database (or, where upstream read it, a rendering), within bounded
// time and memory.
func TestHostile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		base  string // test database the case starts from
		craft func(t *testing.T, path string)
		lim   sqlite.Limits
		want  string // error substring; "" for a rendering
		// timeout bounds the rendering (default 10 s)
		timeout time.Duration
	}{
		{
			name:  "text file",
			craft: func(t *testing.T, path string) { write(t, path, []byte("schema: olm.package\n")) },
			want:  "not an SQLite database",
		},
		{
			name:  "header only",
			craft: func(t *testing.T, path string) { write(t, path, []byte(sqlite.Magic)) },
			want:  "cannot be read as an SQLite database",
		},
		{
			name: "truncated",
			craft: func(t *testing.T, path string) {
				b := read(t, path)
				write(t, path, b[:len(b)/2])
			},
			want: "database ",
		},
		{
			name: "pages overwritten",
			craft: func(t *testing.T, path string) {
				b := read(t, path)
				for i := 4096; i < len(b); i += 7 {
					b[i] ^= 0x5a
				}
				write(t, path, b)
			},
			want: "database ",
		},
		{
			name: "larger than the limit",
			lim:  sqlite.Limits{MaxFileSize: 4096},
			want: "more than the 4096 the database limit allows",
		},
		{
			name: "more rows than the limit",
			lim:  sqlite.Limits{MaxRows: 10},
			want: "more than 10 rows (the limit)",
		},
		{
			name: "huge manifest",
			craft: func(t *testing.T, path string) {
				exec(t, path, `UPDATE operatorbundle SET csv = '{"x":"' || printf('%.*c', 2000000, 'x') || '"}' WHERE name = 'etcdoperator.v0.9.2'`)
			},
			lim:  sqlite.Limits{MaxValueSize: 1 << 20},
			want: `bundle "etcdoperator.v0.9.2": its manifests hold more than 1048576 bytes (the limit)`,
		},
		{
			name: "manifest not JSON",
			craft: func(t *testing.T, path string) {
				exec(t, path, `UPDATE operatorbundle SET csv = '{"kind":', bundle = '{"kind":' WHERE name = 'etcdoperator.v0.9.2'`)
			},
			want: "database ",
		},
		{
			name:  "table missing",
			craft: func(t *testing.T, path string) { exec(t, path, `DROP TABLE channel_entry`) },
			want:  "no such table: channel_entry",
		},
		{
			name: "schema version from the future",
			craft: func(t *testing.T, path string) {
				exec(t, path, `DROP TABLE related_image`, `UPDATE schema_migrations SET version = 99`)
			},
			want: "no such table: related_image (1) (the database records schema version 99; upstream's last is 13)",
		},
		{
			name:  "no schema version",
			craft: func(t *testing.T, path string) { exec(t, path, `DROP TABLE schema_migrations`) },
			want:  "database ",
		},
		{
			name: "column of the wrong type",
			craft: func(t *testing.T, path string) {
				exec(t, path, `PRAGMA foreign_keys = OFF`, `UPDATE channel_entry SET depth = x'00ff' WHERE entry_id = 1`)
			},
			want: "database ",
		},
		{
			// replaces pointing back up the channel: the walk ends.
			name: "cycle in replaces",
			craft: func(t *testing.T, path string) {
				exec(t, path, `PRAGMA foreign_keys = OFF`,
					`UPDATE channel_entry SET replaces = (SELECT max(entry_id) FROM channel_entry) WHERE replaces IS NULL`,
					`UPDATE channel_entry SET replaces = entry_id WHERE entry_id = (SELECT min(entry_id) FROM channel_entry)`)
			},
			want: "detected cycle in replaces chain of upgrade graph: prometheusoperator.0.15.0 -> prometheusoperator.0.15.0",
		},
		{
			name: "replaces to no entry",
			craft: func(t *testing.T, path string) {
				exec(t, path, `PRAGMA foreign_keys = OFF`, `UPDATE channel_entry SET replaces = 1000000`)
			},
			want: "multiple channel heads found in graph",
		},
		{
			// a view runs SQL of the file's own: a query over this one
			// would never end.
			name: "view",
			craft: func(t *testing.T, path string) {
				exec(t, path, `DROP TABLE related_image`,
					`CREATE VIEW related_image(image, operatorbundle_name) AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT 'img', 'b' FROM c WHERE x < 0`)
			},
			want: `the database has a view "related_image", which upstream's index schema never has`,
		},
		{
			name: "trigger of its own",
			base: "v05",
			craft: func(t *testing.T, path string) {
				exec(t, path, `CREATE TRIGGER grow AFTER UPDATE ON operatorbundle BEGIN
					INSERT INTO related_image SELECT 'img' || x, NEW.name FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c);
				END`)
			},
			want: `the database has a trigger "grow", which upstream's index schema never has`,
		},
		{
			// upstream's cleanup trigger, its body replaced: upstream's
			// own body is used instead (the database still renders as
			// the test database does).
			name: "upstream's trigger rewritten",
			base: "v08",
			craft: func(t *testing.T, path string) {
				exec(t, path, `DROP TRIGGER api_provider_cleanup`, `CREATE TRIGGER api_provider_cleanup AFTER DELETE ON api_provider BEGIN
					INSERT INTO related_image SELECT 'img' || x, 'b' FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c);
				END`)
			},
		},
		{
			// a long query is cancelled with its context: a cross join
			// of the largest table with itself, many times over.
			name: "cancelled",
			craft: func(t *testing.T, path string) {
				exec(t, path, `PRAGMA foreign_keys = OFF`, `INSERT INTO related_image SELECT 'img' || x, 'etcdoperator.v0.9.2' FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 20000) SELECT x FROM c)`)
			},
			timeout: time.Millisecond,
			want:    "context deadline exceeded",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := tc.base
			if base == "" {
				base = "v13"
			}
			path := dbFile(t, base)
			if tc.craft != nil {
				tc.craft(t, path)
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			start := time.Now()
			_, err := sqlite.RenderFile(ctx, path, "crafted.db", sqlite.Options{Limits: tc.lim})
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v", d)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			case err != nil && !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "crafted.db"):
				t.Errorf("error does not name the database: %v", err)
			}
		})
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
