/**
 * The tables of one application's `ClientHolders` object, as one baseline: nothing has been
 * released, so there is no earlier state to upgrade. A later release appends a step to this list
 * and never edits one that shipped (docs/deploy.md, "Changing a schema").
 *
 * - `holders`: the users holding (or about to hold) grants for the application.
 * - `application`: the application itself, copied from the Directory the first time it is looked
 *   up (applications are never edited), so resolving a client id reaches only this object;
 *   `deleted` is final; `ending`: the client id of a deleted application whose holders' grants are
 *   still to be ended (until done).
 */
export const CLIENT_HOLDERS_SCHEMA = [
  `CREATE TABLE holders (
     user_id INTEGER PRIMARY KEY
   );
   CREATE TABLE application (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     row TEXT,
     deleted INTEGER NOT NULL DEFAULT 0,
     ending TEXT
   );`,
];
