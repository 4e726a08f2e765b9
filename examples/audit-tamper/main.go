// Command audit-tamper edits one record of a SQLite audit log behind
// Toolbelt's back, replacing text in its stored body, so that
// `toolbelt audit verify` can be seen finding it:
//
//	audit-tamper DATABASE SEQ OLD NEW
package main

import (
	"database/sql"
	"log"
	"os"
	"strconv"

	_ "modernc.org/sqlite"
)

func main() {
	log.SetFlags(0)
	if len(os.Args) != 5 {
		log.Fatal("usage: audit-tamper DATABASE SEQ OLD NEW")
	}
	seq, err := strconv.Atoi(os.Args[2])
	if err != nil {
		log.Fatalf("SEQ must be a record's number: %v", err)
	}
	db, err := sql.Open("sqlite", os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(`UPDATE audit_log SET body = replace(body, ?, ?) WHERE seq = ?`, os.Args[3], os.Args[4], seq)
	if err != nil {
		log.Fatal(err)
	}
	n, _ := res.RowsAffected()
	log.Printf("%d record changed", n)
}
