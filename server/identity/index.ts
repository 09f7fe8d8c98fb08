/**
 * Identity (issue 39): the people behind the users table. User management with one set of rules
 * for the command line, the admin API and the admin page. Imports auth (passwords, roles), db
 * (the audit chain) and errors; the api role mounts its routes.
 * @module
 */
export { addUser, listUsers, setRole, setDisabled, resetPassword, generatePassword, CLI_ACTOR, USERNAME, type Actor } from './accounts.ts';
export { countUsers, type ManagedUser } from './store.ts';
export { firstAdminLine } from './first-admin.ts';
