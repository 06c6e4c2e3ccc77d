package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// LatestVersion is the last schema version upstream's index databases
// have (its migrations 000 to 013).
const LatestVersion = 13

// migrationsTable records the schema version of a database: one row, its
// version column; no table or no row means no migration has run.
const migrationsTable = "schema_migrations"

// schemaVersion reads the version a database records, -1 for none. As
// upstream does, only the first row counts.
func schemaVersion(ctx context.Context, q querier) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = ?`, migrationsTable).Scan(&n); err != nil {
		return -1, err
	}
	if n == 0 {
		return -1, nil
	}
	var v sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT version FROM `+migrationsTable+` LIMIT 1`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return -1, nil
	case err != nil:
		return -1, fmt.Errorf("read the schema version: %w", err)
	case !v.Valid:
		// upstream scans NULL into an int and fails
		return -1, errors.New("read the schema version: the version is NULL")
	}
	return int(v.Int64), nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// A step brings a database from the version before it to its own. Steps
// change only the private copy Open made, never the file the user gave.
type step func(ctx context.Context, tx *sql.Tx) error

// steps are the schema changes of upstream's migrations 000 to 013, in
// order, written from what each one leaves in the database: the tables and
// columns it adds, and the rows it fills in from the ones already there
// (its quirks included: they decide what an old database renders to).
var steps = [LatestVersion + 1]step{
	stepInit,
	stepRelatedImages,
	stepBundlePath,
	stepRequiredAPIs,
	stepCascadeDelete,
	stepVersionSkipRange,
	stepAPIsByBundle,
	stepReplacesSkips,
	stepDependencies,
	stepProperties,
	stepPropertyPaths,
	stepSubstitutesFor,
	stepDeprecated,
	stepDropStaleDeprecations,
}

// migrate brings the database from version from to LatestVersion in one
// transaction and records the new version, as upstream's `opm render` does
// before it reads a database. A version above LatestVersion is left alone
// (upstream runs no migration on it either).
func migrate(ctx context.Context, db *sql.DB, from int) error {
	if from >= LatestVersion {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+migrationsTable+` (version bigint NOT NULL, timestamp DATETIME DEFAULT CURRENT_TIMESTAMP)`); err != nil {
		return err
	}
	for v := from + 1; v <= LatestVersion; v++ {
		if err := steps[v](ctx, tx); err != nil {
			return fmt.Errorf("migrate the database to schema version %d: %w", v, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+migrationsTable); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+migrationsTable+`(version) VALUES (?)`, v); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// execAll runs statements in order.
func execAll(ctx context.Context, tx *sql.Tx, stmts ...string) error {
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// 000: the first schema.
func stepInit(ctx context.Context, tx *sql.Tx) error {
	return execAll(ctx, tx,
		`CREATE TABLE IF NOT EXISTS operatorbundle (name TEXT PRIMARY KEY, csv TEXT UNIQUE, bundle TEXT)`,
		`CREATE TABLE IF NOT EXISTS package (name TEXT PRIMARY KEY, default_channel TEXT,
			FOREIGN KEY(name, default_channel) REFERENCES channel(package_name, name))`,
		`CREATE TABLE IF NOT EXISTS channel (name TEXT, package_name TEXT, head_operatorbundle_name TEXT,
			PRIMARY KEY(name, package_name),
			FOREIGN KEY(package_name) REFERENCES package(name),
			FOREIGN KEY(head_operatorbundle_name) REFERENCES operatorbundle(name))`,
		`CREATE TABLE IF NOT EXISTS channel_entry (entry_id INTEGER PRIMARY KEY, channel_name TEXT, package_name TEXT,
			operatorbundle_name TEXT, replaces INTEGER, depth INTEGER,
			FOREIGN KEY(replaces) REFERENCES channel_entry(entry_id) DEFERRABLE INITIALLY DEFERRED,
			FOREIGN KEY(channel_name, package_name) REFERENCES channel(name, package_name))`,
		`CREATE TABLE IF NOT EXISTS api (group_name TEXT, version TEXT, kind TEXT, plural TEXT NOT NULL,
			PRIMARY KEY(group_name, version, kind))`,
		`CREATE TABLE IF NOT EXISTS api_provider (group_name TEXT, version TEXT, kind TEXT, channel_entry_id INTEGER,
			FOREIGN KEY(channel_entry_id) REFERENCES channel_entry(entry_id),
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind))`,
	)
}

// bundleNames lists the distinct non-NULL bundle names, in the order the
// table gives them.
func bundleNames(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT name FROM operatorbundle`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n sql.NullString
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		if n.Valid {
			out = append(out, n.String)
		}
	}
	return out, rows.Err()
}

// storedCSV reads the csv column of a bundle: an error when there is no
// such bundle or the column is NULL.
func storedCSV(ctx context.Context, tx *sql.Tx, name string) (*csvSpec, error) {
	var s sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT csv FROM operatorbundle WHERE name = ?`, name).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("bundle %s not found", name)
	}
	if err != nil {
		return nil, err
	}
	if !s.Valid {
		return nil, errors.New("bad value for csv")
	}
	return parseCSV(s.String)
}

// 001: related_image, filled from each bundle's CSV: the images of its
// deployments' containers and init containers, and its relatedImages. A
// bundle whose CSV does not parse is skipped.
func stepRelatedImages(ctx context.Context, tx *sql.Tx) error {
	// upstream ignores this statement's error
	_, _ = tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS related_image (image TEXT, operatorbundle_name TEXT,
		FOREIGN KEY(operatorbundle_name) REFERENCES operatorbundle(name))`)
	return eachStoredCSV(ctx, tx, func(name string, csv *csvSpec) {
		images, err := csv.images()
		if err != nil {
			return
		}
		for _, img := range images {
			// upstream goes on past a failed insert
			_, _ = tx.ExecContext(ctx, `INSERT INTO related_image(image, operatorbundle_name) VALUES (?, ?)`, img, name)
		}
	})
}

// eachStoredCSV calls fn with each bundle's name and parsed CSV; bundles
// with no CSV or one that does not parse are skipped, as upstream's
// backfills skip them.
func eachStoredCSV(ctx context.Context, tx *sql.Tx, fn func(name string, csv *csvSpec)) error {
	names, err := bundleNames(ctx, tx)
	if err != nil {
		return err
	}
	for _, name := range names {
		if csv, err := storedCSV(ctx, tx, name); err == nil {
			fn(name, csv)
		}
	}
	return nil
}

// 002: operatorbundle.bundlepath, the bundle image.
func stepBundlePath(ctx context.Context, tx *sql.Tx) error {
	return execAll(ctx, tx, `ALTER TABLE operatorbundle ADD COLUMN bundlepath TEXT`)
}

// 003: api_requirer, by channel entry, filled from the CSVs of the bundles
// that have channel entries: their required CRDs and API services, each
// also recorded in api.
func stepRequiredAPIs(ctx context.Context, tx *sql.Tx) error {
	if err := execAll(ctx, tx, `CREATE TABLE IF NOT EXISTS api_requirer (group_name TEXT, version TEXT, kind TEXT, channel_entry_id INTEGER,
		FOREIGN KEY(channel_entry_id) REFERENCES channel_entry(entry_id),
		FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind))`); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT e.entry_id, b.name FROM channel_entry e
		INNER JOIN operatorbundle b ON b.name = e.operatorbundle_name`)
	if err != nil {
		return err
	}
	type entry struct {
		id   int64
		name string
	}
	var entries []entry
	seen := map[int64]int{}
	for rows.Next() {
		var id sql.NullInt64
		var name sql.NullString
		if err := rows.Scan(&id, &name); err != nil {
			rows.Close()
			return err
		}
		if !id.Valid || !name.Valid {
			continue
		}
		// upstream keeps one name per entry id, the last one read
		if i, ok := seen[id.Int64]; ok {
			entries[i].name = name.String
			continue
		}
		seen[id.Int64] = len(entries)
		entries = append(entries, entry{id.Int64, name.String})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, e := range entries {
		csv, err := storedCSV(ctx, tx, e.name)
		if err != nil {
			continue
		}
		// A failure leaves the rows inserted before it, as upstream's does.
		_ = insertRequiredAPIs(ctx, tx, e.id, csv)
	}
	return nil
}

func insertRequiredAPIs(ctx context.Context, tx *sql.Tx, entryID int64, csv *csvSpec) error {
	add := func(group, version, kind, plural string) error {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO api(group_name, version, kind, plural) VALUES (?, ?, ?, ?)`, group, version, kind, plural); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO api_requirer(group_name, version, kind, channel_entry_id) VALUES (?, ?, ?, ?)`, group, version, kind, entryID)
		return err
	}
	crds, err := csv.requiredCRDs()
	if err == nil {
		for _, d := range crds {
			plural, group, ok := strings.Cut(d.Name, ".")
			if !ok {
				return fmt.Errorf("can't split bad CRD name %s", d.Name)
			}
			if err := add(group, d.Version, d.Kind, plural); err != nil {
				return err
			}
		}
	}
	apis, err := csv.requiredAPIServices()
	if err == nil {
		for _, d := range apis {
			if err := add(d.Group, d.Version, d.Kind, d.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// 004: the tables rebuilt so that deletes cascade; the CSV column loses
// its UNIQUE constraint, api_provider and api_requirer gain primary keys.
// upstream turns foreign keys off for it, which has no effect inside its
// transaction, so the rebuild runs with them on as everything else does.
func stepCascadeDelete(ctx context.Context, tx *sql.Tx) error {
	tables := []string{"operatorbundle", "package", "channel", "channel_entry", "api_provider", "related_image", "api_requirer"}
	var stmts []string
	stmts = append(stmts, `PRAGMA foreign_keys = 0`)
	for _, t := range tables {
		stmts = append(stmts, `ALTER TABLE `+t+` RENAME TO `+t+`_old`)
	}
	stmts = append(stmts,
		`CREATE TABLE operatorbundle (name TEXT PRIMARY KEY, csv TEXT, bundle TEXT, bundlepath TEXT)`,
		`CREATE TABLE package (name TEXT PRIMARY KEY, default_channel TEXT,
			FOREIGN KEY(name, default_channel) REFERENCES channel(package_name, name) ON DELETE CASCADE)`,
		`CREATE TABLE channel (name TEXT, package_name TEXT, head_operatorbundle_name TEXT,
			PRIMARY KEY(name, package_name),
			FOREIGN KEY(head_operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE)`,
		`CREATE TABLE channel_entry (entry_id INTEGER PRIMARY KEY, channel_name TEXT, package_name TEXT,
			operatorbundle_name TEXT, replaces INTEGER, depth INTEGER,
			FOREIGN KEY(replaces) REFERENCES channel_entry(entry_id) DEFERRABLE INITIALLY DEFERRED,
			FOREIGN KEY(channel_name, package_name) REFERENCES channel(name, package_name) ON DELETE CASCADE)`,
		`CREATE TABLE api_provider (group_name TEXT, version TEXT, kind TEXT, channel_entry_id INTEGER,
			PRIMARY KEY(group_name, version, kind, channel_entry_id),
			FOREIGN KEY(channel_entry_id) REFERENCES channel_entry(entry_id) ON DELETE CASCADE,
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind))`,
		`CREATE TABLE related_image (image TEXT, operatorbundle_name TEXT,
			FOREIGN KEY(operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE)`,
		`CREATE TABLE api_requirer (group_name TEXT, version TEXT, kind TEXT, channel_entry_id INTEGER,
			PRIMARY KEY(group_name, version, kind, channel_entry_id),
			FOREIGN KEY(channel_entry_id) REFERENCES channel_entry(entry_id) ON DELETE CASCADE,
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind))`,
	)
	for _, t := range tables {
		stmts = append(stmts,
			`INSERT INTO `+t+` SELECT * FROM "`+t+`_old"`,
			`DROP TABLE "`+t+`_old"`)
	}
	stmts = append(stmts, `PRAGMA foreign_keys = 1`)
	return execAll(ctx, tx, stmts...)
}

// 005: operatorbundle.skiprange and version. upstream's backfill inserts a
// new row (NULL name) per bundle with the CSV's version and olm.skipRange
// annotation instead of updating the bundle's row, whose version stays
// NULL; those rows are kept, as they change what later steps and reads
// see.
func stepVersionSkipRange(ctx context.Context, tx *sql.Tx) error {
	if err := execAll(ctx, tx,
		`ALTER TABLE operatorbundle ADD COLUMN skiprange TEXT`,
		`ALTER TABLE operatorbundle ADD COLUMN version TEXT`); err != nil {
		return err
	}
	return eachStoredCSV(ctx, tx, func(_ string, csv *csvSpec) {
		version, err := csv.version()
		if err != nil {
			version = ""
		}
		// upstream goes on past a failed insert
		_, _ = tx.ExecContext(ctx, `INSERT INTO operatorbundle(version, skiprange) VALUES (?, ?)`, version, csv.annotation("olm.skipRange"))
	})
}

// gvk is a group, version and kind.
type gvk struct{ group, version, kind string }

// bundleKey names a bundle row as the later tables do: name, version and
// bundle path, any of which may be NULL.
type bundleKey struct{ name, version, path sql.NullString }

// bundleAPIs are the APIs a bundle provides and requires, in first-seen
// order.
type bundleAPIs struct {
	provided, required []gvk
}

// apiSet collects bundleAPIs by bundle, keeping first-seen order.
type apiSet struct {
	keys []bundleKey
	m    map[bundleKey]*bundleAPIs
}

func (s *apiSet) add(k bundleKey, g gvk, required bool) {
	if s.m == nil {
		s.m = map[bundleKey]*bundleAPIs{}
	}
	a, ok := s.m[k]
	if !ok {
		a = &bundleAPIs{}
		s.m[k] = a
		s.keys = append(s.keys, k)
	}
	list := &a.provided
	if required {
		list = &a.required
	}
	if !slices.Contains(*list, g) {
		*list = append(*list, g)
	}
}

// scanAPIs reads rows of (group, version, kind, name, version, path) into
// set; rows with a NULL group, version, kind or name are skipped.
func scanAPIs(ctx context.Context, tx *sql.Tx, set *apiSet, required bool, query string) error {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var g, v, k sql.NullString
		var key bundleKey
		if err := rows.Scan(&g, &v, &k, &key.name, &key.version, &key.path); err != nil {
			return err
		}
		if !g.Valid || !v.Valid || !k.Valid || !key.name.Valid {
			continue
		}
		set.add(key, gvk{g.String, v.String, k.String}, required)
	}
	return rows.Err()
}

// 006: api_provider and api_requirer keyed by bundle (name, version,
// path) instead of channel entry.
func stepAPIsByBundle(ctx context.Context, tx *sql.Tx) error {
	if err := execAll(ctx, tx,
		`CREATE TABLE api_provider_new (group_name TEXT, version TEXT, kind TEXT,
			operatorbundle_name TEXT, operatorbundle_version TEXT, operatorbundle_path TEXT,
			FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind) ON DELETE CASCADE)`,
		`CREATE TABLE api_requirer_new (group_name TEXT, version TEXT, kind TEXT,
			operatorbundle_name TEXT, operatorbundle_version TEXT, operatorbundle_path TEXT,
			FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind) ON DELETE CASCADE)`,
		`CREATE UNIQUE INDEX pk ON operatorbundle(name, version, bundlepath)`,
	); err != nil {
		return err
	}
	var set apiSet
	for _, t := range []struct {
		table    string
		required bool
	}{{"api_provider", false}, {"api_requirer", true}} {
		if err := scanAPIs(ctx, tx, &set, t.required, `SELECT a.group_name, a.version, a.kind, b.name, b.version, b.bundlepath
			FROM `+t.table+` a
			INNER JOIN channel_entry e ON e.entry_id = a.channel_entry_id
			INNER JOIN operatorbundle b ON b.name = e.operatorbundle_name`); err != nil {
			return err
		}
	}
	for _, k := range set.keys {
		a := set.m[k]
		for _, g := range a.provided {
			if _, err := tx.ExecContext(ctx, `INSERT INTO api_provider_new(group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?, ?)`,
				g.group, g.version, g.kind, k.name, k.version, k.path); err != nil {
				return err
			}
		}
		for _, g := range a.required {
			if _, err := tx.ExecContext(ctx, `INSERT INTO api_requirer_new(group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?, ?)`,
				g.group, g.version, g.kind, k.name, k.version, k.path); err != nil {
				return err
			}
		}
	}
	return execAll(ctx, tx,
		`DROP TABLE api_provider`,
		`DROP TABLE api_requirer`,
		`ALTER TABLE api_provider_new RENAME TO api_provider`,
		`ALTER TABLE api_requirer_new RENAME TO api_requirer`)
}

// 007: operatorbundle.replaces and skips, filled from the channel entries
// of each bundle: ordered by depth, the bundle the first entry replaces is
// its replaces, the others its skips. Two triggers drop an api row once
// nothing provides or requires it.
func stepReplacesSkips(ctx context.Context, tx *sql.Tx) error {
	if err := execAll(ctx, tx,
		`ALTER TABLE operatorbundle ADD COLUMN replaces TEXT`,
		`ALTER TABLE operatorbundle ADD COLUMN skips TEXT`,
		cleanupTriggers["api_provider_cleanup"],
		cleanupTriggers["api_requirer_cleanup"],
	); err != nil {
		return err
	}
	names, err := bundleNames(ctx, tx)
	if err != nil {
		return err
	}
	for _, name := range names {
		replaces, skips, err := replacesFromEntries(ctx, tx, name)
		if err != nil {
			return fmt.Errorf("error backfilling replaces and skips: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE operatorbundle SET replaces = ?, skips = ? WHERE name = ?`, replaces, strings.Join(skips, ","), name); err != nil {
			return fmt.Errorf("error backfilling replaces and skips: %w", err)
		}
	}
	return nil
}

// replacesFromEntries is 007's reading of a bundle's entries: the distinct
// names of the bundles they replace, ordered by the entries' depth (the
// query's form decides which depth orders a name seen at several).
func replacesFromEntries(ctx context.Context, tx *sql.Tx, name string) (string, []string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT r.operatorbundle_name
		FROM channel_entry
		LEFT OUTER JOIN channel_entry r ON channel_entry.replaces = r.entry_id
		WHERE channel_entry.operatorbundle_name = ?
		ORDER BY channel_entry.depth ASC`, name)
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	var (
		replaces string
		skips    = []string{}
		first    = true
	)
	for rows.Next() {
		var n sql.NullString
		if err := rows.Scan(&n); err != nil {
			return "", nil, err
		}
		if first {
			first = false
			if n.Valid {
				replaces = n.String
			}
			continue
		}
		if n.Valid {
			skips = append(skips, n.String)
		}
	}
	return replaces, skips, rows.Err()
}

// 008: dependencies, filled with an olm.gvk dependency per required API.
func stepDependencies(ctx context.Context, tx *sql.Tx) error {
	if err := execAll(ctx, tx, `CREATE TABLE IF NOT EXISTS dependencies (type TEXT, value TEXT,
		operatorbundle_name TEXT, operatorbundle_version TEXT, operatorbundle_path TEXT,
		FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE)`); err != nil {
		return err
	}
	var set apiSet
	if err := scanAPIs(ctx, tx, &set, true, `SELECT group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path FROM api_requirer`); err != nil {
		return err
	}
	for _, k := range set.keys {
		for _, g := range set.m[k].required {
			// keys in the order Go writes a map: group, kind, type, version
			value, err := json.Marshal(map[string]string{"type": "olm.gvk", "group": g.group, "version": g.version, "kind": g.kind})
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO dependencies(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?)`,
				"olm.gvk", value, k.name, k.version, k.path); err != nil {
				return err
			}
		}
	}
	return nil
}

// 009: properties, filled with an olm.package property (from the bundle's
// channel entries) and an olm.gvk property per provided API, for each
// bundle that provides an API. Then upstream means to drop the "type" key
// from the dependencies' values, but its subquery is not tied to the row
// it updates: every dependency gets the value of the first one, without
// its "type".
func stepProperties(ctx context.Context, tx *sql.Tx) error {
	if err := execAll(ctx, tx, `CREATE TABLE IF NOT EXISTS properties (type TEXT, value TEXT,
		operatorbundle_name TEXT, operatorbundle_version TEXT, operatorbundle_path TEXT,
		FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE)`); err != nil {
		return err
	}
	var set apiSet
	if err := scanAPIs(ctx, tx, &set, false, `SELECT group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path FROM api_provider`); err != nil {
		return err
	}
	insert := `INSERT INTO properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) VALUES (?, ?, ?, ?, ?)`
	for _, k := range set.keys {
		pkg, err := packageOfBundle(ctx, tx, k.name.String)
		if err != nil {
			return err
		}
		value, err := json.Marshal(map[string]string{"packageName": pkg, "version": k.version.String})
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, insert, "olm.package", value, k.name, k.version, k.path); err != nil {
			return err
		}
		for _, g := range set.m[k].provided {
			value, err := json.Marshal(map[string]string{"group": g.group, "version": g.version, "kind": g.kind})
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, insert, "olm.gvk", value, k.name, k.version, k.path); err != nil {
				return err
			}
		}
	}
	return execAll(ctx, tx, `UPDATE dependencies SET value = (SELECT json_remove(d.value, '$.type') FROM dependencies d WHERE d.operatorbundle_name = d.operatorbundle_name)`)
}

// packageOfBundle is the first package a bundle's channel entries name, ""
// for none.
func packageOfBundle(ctx context.Context, tx *sql.Tx, name string) (string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT package_name FROM channel_entry WHERE operatorbundle_name = ?`, name)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	if rows.Next() {
		var p sql.NullString
		if err := rows.Scan(&p); err != nil {
			return "", err
		}
		return p.String, nil
	}
	return "", rows.Err()
}

// 010: every property's bundle path set from its bundle's row (NULL when
// no row matches its name and version).
func stepPropertyPaths(ctx context.Context, tx *sql.Tx) error {
	return execAll(ctx, tx, `UPDATE properties SET operatorbundle_path = (SELECT b.bundlepath FROM operatorbundle b
		WHERE properties.operatorbundle_name = b.name AND properties.operatorbundle_version = b.version)`)
}

// 011: operatorbundle.substitutesfor.
func stepSubstitutesFor(ctx context.Context, tx *sql.Tx) error {
	return execAll(ctx, tx, `ALTER TABLE operatorbundle ADD COLUMN substitutesfor TEXT`)
}

// 012: deprecated, the bundles with an olm.deprecated property.
func stepDeprecated(ctx context.Context, tx *sql.Tx) error {
	return execAll(ctx, tx,
		`CREATE TABLE IF NOT EXISTS deprecated (operatorbundle_name TEXT PRIMARY KEY)`,
		`INSERT OR REPLACE INTO deprecated(operatorbundle_name) SELECT operatorbundle_name FROM properties WHERE properties.type = 'olm.deprecated'`)
}

// 013: deprecated rows of bundles that are no longer there dropped.
func stepDropStaleDeprecations(ctx context.Context, tx *sql.Tx) error {
	return execAll(ctx, tx, `DELETE FROM deprecated WHERE operatorbundle_name NOT IN
		(SELECT DISTINCT d.operatorbundle_name FROM deprecated d INNER JOIN operatorbundle b ON d.operatorbundle_name = b.name)`)
}

// cleanupTriggers are the triggers of upstream's schema (migration 7), by
// name: a database's own are replaced by these before anything is written
// (see checkSchema).
var cleanupTriggers = map[string]string{
	"api_provider_cleanup": `CREATE TRIGGER api_provider_cleanup AFTER DELETE ON api_provider
		WHEN NOT EXISTS (SELECT 1 FROM api_provider JOIN api_requirer WHERE
			(api_provider.group_name = OLD.group_name AND api_provider.version = OLD.version AND api_provider.kind = OLD.kind) OR
			(api_requirer.group_name = OLD.group_name AND api_requirer.version = OLD.version AND api_requirer.kind = OLD.kind))
		BEGIN
			DELETE FROM api WHERE group_name = OLD.group_name AND version = OLD.version AND kind = OLD.kind;
		END`,
	"api_requirer_cleanup": `CREATE TRIGGER api_requirer_cleanup AFTER DELETE ON api_requirer
		WHEN NOT EXISTS (SELECT 1 FROM api_provider JOIN api_requirer WHERE
			(api_provider.group_name = OLD.group_name AND api_provider.version = OLD.version AND api_provider.kind = OLD.kind) OR
			(api_requirer.group_name = OLD.group_name AND api_requirer.version = OLD.version AND api_requirer.kind = OLD.kind))
		BEGIN
			DELETE FROM api WHERE group_name = OLD.group_name AND version = OLD.version AND kind = OLD.kind;
		END`,
}
