// Package sqlite reads the sqlite index databases of upstream opm's
// `opm index add` and `opm registry add` (an index.db file, or the database
// of an index image) and renders them to file-based catalogs exactly as
// upstream opm v1.73.0, the last release that read them, did.
//
// The database is never changed and never trusted: Open copies it (within
// Limits.MaxFileSize) to a private temporary file, checks its structure,
// then brings the copy's schema to the latest of upstream's fourteen
// versions as upstream's render did (its migrations' quirks included, as
// they decide what an old database renders to) and reads it. The driver is
// modernc.org/sqlite, SQLite compiled to Go: no cgo, so opm stays a static
// executable.
package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	// The pure-Go SQLite driver, registered as "sqlite".
	_ "modernc.org/sqlite"

	"github.com/opmkit/opm/pkg/declcfg"
)

// Magic is how every SQLite database file starts.
const Magic = "SQLite format 3\x00"

// Default limits.
const (
	DefaultMaxFileSize  int64 = 4 << 30
	DefaultMaxRows      int64 = 50_000_000
	DefaultMaxValueSize int64 = 256 << 20
)

// Limits bound what reading a database may cost. Zero fields take the
// defaults.
type Limits struct {
	// MaxFileSize is the largest database file read.
	MaxFileSize int64
	// MaxRows bounds the rows read from all tables together.
	MaxRows int64
	// MaxValueSize bounds the manifests of one bundle.
	MaxValueSize int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultMaxFileSize
	}
	if l.MaxRows <= 0 {
		l.MaxRows = DefaultMaxRows
	}
	if l.MaxValueSize <= 0 {
		l.MaxValueSize = DefaultMaxValueSize
	}
	return l
}

// ErrNotDatabase is wrapped by the error of a file that is not an SQLite
// database.
var ErrNotDatabase = errors.New("not an SQLite database")

// IsDatabase reports whether the file at path starts as an SQLite database
// does. It reads 16 bytes of regular files only.
func IsDatabase(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, len(Magic))
	if _, err := io.ReadFull(f, buf); err != nil {
		return false
	}
	return string(buf) == Magic
}

// Options configure a read.
type Options struct {
	Limits Limits
	// Warn receives what upstream logs as a warning and goes past (an
	// icon that does not decode); nil drops them.
	Warn func(string)
}

// DB is an index database opened for reading: a private copy, removed by
// Close.
type DB struct {
	db      *sql.DB
	dir     string
	name    string
	version int
	lim     Limits
}

// Open copies the database at path to a private temporary directory and
// opens the copy. name is how errors name the database (the path, or the
// image and the path in it).
func Open(ctx context.Context, path, name string, lim Limits) (*DB, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return OpenFile(ctx, f, name, lim)
}

// OpenFile is Open for a file already opened (through an os.Root, say).
func OpenFile(ctx context.Context, f *os.File, name string, lim Limits) (*DB, error) {
	lim = lim.withDefaults()
	dir, err := os.MkdirTemp("", "opm-sqlite-*")
	if err != nil {
		return nil, err
	}
	d := &DB{dir: dir, name: name, lim: lim}
	if err := d.open(ctx, f); err != nil {
		d.Close()
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	return d, nil
}

func (d *DB) open(ctx context.Context, f *os.File) error {
	copyPath := filepath.Join(d.dir, "index.db")
	if err := copyBounded(ctx, f, copyPath, d.lim.MaxFileSize); err != nil {
		return err
	}
	// foreign keys on, as upstream opened databases; triggers and views
	// may not call functions with side effects; no journal file (the copy
	// is thrown away).
	dsn := "file:" + copyPath + "?_pragma=foreign_keys(1)&_pragma=trusted_schema(0)&_pragma=journal_mode(MEMORY)&_pragma=synchronous(OFF)&_pragma=cell_size_check(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	d.db = db
	var check string
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check(1)`).Scan(&check); err != nil {
		return corrupt(ctx, err)
	}
	if check != "ok" {
		return fmt.Errorf("the database is corrupt: %s", check)
	}
	v, err := schemaVersion(ctx, db)
	if err != nil {
		return corrupt(ctx, err)
	}
	d.version = v
	return checkSchema(ctx, db)
}

// checkSchema refuses what upstream's schema never has and a crafted file
// could use to run SQL of its own while the copy is read or migrated:
// views (a query over one can run without end, or sort without bound) and
// triggers other than upstream's two cleanup triggers, which are replaced
// by upstream's own text.
func checkSchema(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger') ORDER BY name`)
	if err != nil {
		return corrupt(ctx, err)
	}
	var triggers []string
	for rows.Next() {
		var typ, name string
		if err := rows.Scan(&typ, &name); err != nil {
			rows.Close()
			return corrupt(ctx, err)
		}
		if _, ok := cleanupTriggers[name]; typ == "view" || !ok {
			rows.Close()
			return fmt.Errorf("the database has a %s %q, which upstream's index schema never has", typ, name)
		}
		triggers = append(triggers, name)
	}
	if err := rows.Err(); err != nil {
		return corrupt(ctx, err)
	}
	rows.Close()
	for _, name := range triggers {
		if _, err := db.ExecContext(ctx, `DROP TRIGGER "`+name+`"`); err != nil {
			return corrupt(ctx, err)
		}
		if _, err := db.ExecContext(ctx, cleanupTriggers[name]); err != nil {
			return fmt.Errorf("the database's trigger %s cannot be upstream's: %w", name, err)
		}
	}
	return nil
}

// corrupt words an error met while checking the file.
func corrupt(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("the file cannot be read as an SQLite database: %w", err)
}

// copyBounded copies a regular file of at most max bytes that starts as an
// SQLite database does.
func copyBounded(ctx context.Context, f *os.File, dst string, max int64) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	if st.Size() > max {
		return fmt.Errorf("the file holds %d bytes, more than the %d the database limit allows", st.Size(), max)
	}
	head := make([]byte, len(Magic))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, []byte(Magic)) {
		return ErrNotDatabase
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	if _, err := out.Write(head); err != nil {
		return err
	}
	n, err := io.Copy(out, &ctxReader{ctx: ctx, r: io.LimitReader(f, max-int64(len(head))+1)})
	if err != nil {
		return err
	}
	if n > max-int64(len(head)) {
		return fmt.Errorf("the file grew past the %d bytes the database limit allows while it was read", max)
	}
	return out.Close()
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Version is the schema version the database records (-1 for none).
func (d *DB) Version() int { return d.version }

// Close closes the database and removes the copy.
func (d *DB) Close() error {
	var err error
	if d.db != nil {
		err = d.db.Close()
	}
	if rmErr := os.RemoveAll(d.dir); err == nil {
		err = rmErr
	}
	return err
}

// Contents brings the copy to the latest schema, as upstream does before
// it reads a database, and reads what the database holds.
func (d *DB) Contents(ctx context.Context) (*Contents, error) {
	if err := d.checkOld(ctx); err != nil {
		return nil, d.wrap(ctx, err)
	}
	if err := migrate(ctx, d.db, d.version); err != nil {
		return nil, d.wrap(ctx, err)
	}
	c, err := load(ctx, d.db, d.lim)
	if err != nil {
		return nil, d.wrap(ctx, err)
	}
	return c, nil
}

// OldestReadable is the oldest schema version of a database holding
// bundles that upstream opm v1.73.0 could read: on older ones its
// migrations fail (a foreign key constraint at version 4, a locked table
// at version 6), so there is no output of its to reproduce.
const OldestReadable = 5

// checkOld refuses a database older than OldestReadable that holds
// bundles.
func (d *DB) checkOld(ctx context.Context) error {
	if d.version >= OldestReadable {
		return nil
	}
	var n int64
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM operatorbundle`).Scan(&n); err != nil || n == 0 {
		return nil // let the migrations say what is wrong, or find nothing
	}
	return fmt.Errorf("the database has schema version %d (opm index add wrote it before 2020): upstream opm v1.73.0 fails on databases older than version %d that hold bundles, as opm does; rebuild the catalog from its bundle images with opm index add", d.version, OldestReadable)
}

// wrap names the database in err, and says when the schema version is one
// upstream never wrote.
func (d *DB) wrap(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if d.version > LatestVersion && strings.Contains(err.Error(), "no such") {
		err = fmt.Errorf("%w (the database records schema version %d; upstream's last is %d)", err, d.version, LatestVersion)
	}
	return fmt.Errorf("database %s: %w", d.name, err)
}

// Render reads the database as upstream's `opm render` did: the FBC of
// what it holds. Related images are in the order the rows give them, not
// yet sorted.
func (d *DB) Render(ctx context.Context, warn func(string)) (*declcfg.DeclarativeConfig, error) {
	c, err := d.Contents(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := convert(c, warn)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", d.name, err)
	}
	return cfg, nil
}

// RenderFile opens, renders and closes the database at path.
func RenderFile(ctx context.Context, path, name string, opts Options) (*declcfg.DeclarativeConfig, error) {
	d, err := Open(ctx, path, name, opts.Limits)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Render(ctx, opts.Warn)
}
