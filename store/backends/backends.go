// Package backends registers every built-in store backend with package
// store, so that store.Open picks among them by location: store/sqlite for
// file paths and file: URIs, store/postgres for postgres:// URLs. Import it
// for its side effect where a program opens stores:
//
//	import _ "github.com/statewright-go/statewright/store/backends"
package backends

import (
	_ "github.com/statewright-go/statewright/store/postgres" // postgres:// and postgresql:// URLs
	_ "github.com/statewright-go/statewright/store/sqlite"   // file paths and file: URIs
)
