// The app is a client-rendered chat; the server only serves the shell.
export const ssr = false;
