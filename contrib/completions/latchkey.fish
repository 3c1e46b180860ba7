# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_latchkey_global_optspecs
    string join \n socket= o/output= q/quiet h/help V/version
end

function __fish_latchkey_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_latchkey_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_latchkey_using_subcommand
    set -l cmd (__fish_latchkey_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c latchkey -n "__fish_latchkey_needs_command" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_needs_command" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_needs_command" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c latchkey -n "__fish_latchkey_needs_command" -s V -l version -d 'Print version'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "status" -d 'Show whether the daemon is up, its version, listener and tenant count'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "tenant" -d 'Create, list, inspect and delete tenants (one issuer each)'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "app" -d 'Register OpenID Connect client applications and manage their secrets'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "key" -d 'List, rotate and retire a tenant\'s token-signing keys'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "user" -d 'Invite users and issue recovery links'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "credential" -d 'List and revoke a user\'s passkeys and security keys'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "role" -d 'Create roles and assign them to users; they appear in the `roles` claim of tokens'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "social" -d 'Sign-in with Google, GitHub or any OpenID Connect provider, per tenant'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "apply" -d 'Create or update tenants, roles and applications from a TOML file (idempotent: a second run changes nothing). Nothing is deleted. New confidential apps\' secrets are printed once'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "export" -d 'Print a tenant\'s tenants/roles/apps configuration in the `apply` format (no secrets)'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "audit" -d 'Read the audit log: sign-ins, registrations, credential changes, token grants, admin operations'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "backup" -d 'Write a consistent online copy of the database to FILE (a new file, mode 0600). Back up the key-encryption key file separately: the copy\'s signing keys are sealed with it'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "completions" -d 'Print a shell completion script: `latchkey completions bash > /etc/bash_completion.d/latchkey`'
complete -c latchkey -n "__fish_latchkey_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand status" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand status" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand status" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand status" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and not __fish_seen_subcommand_from create list show delete help" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and not __fish_seen_subcommand_from create list show delete help" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and not __fish_seen_subcommand_from create list show delete help" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and not __fish_seen_subcommand_from create list show delete help" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and not __fish_seen_subcommand_from create list show delete help" -f -a "create" -d 'Create a tenant with its first signing key'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and not __fish_seen_subcommand_from create list show delete help" -f -a "list" -d 'List tenants'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and not __fish_seen_subcommand_from create list show delete help" -f -a "show" -d 'Show one tenant'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and not __fish_seen_subcommand_from create list show delete help" -f -a "delete" -d 'Delete a tenant and everything it owns (users, apps, keys). Cannot be undone'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and not __fish_seen_subcommand_from create list show delete help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from create" -l name -d 'Display name (default: the slug)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from create" -l base-url -d 'Issuer URL (default: {public_url}/{slug}); https, or http on localhost' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from create" -l rp-id -d 'WebAuthn relying-party id (default: the base URL\'s host)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from create" -l registration -d 'Who may register a passkey' -r -f -a "invite\t'Only invited users may register a passkey'
open\t'Anyone may register a free username'"
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from create" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from create" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from create" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from create" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from list" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from list" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from show" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from show" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from delete" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from delete" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from delete" -l yes -d 'Confirm the deletion'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from delete" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from help" -f -a "create" -d 'Create a tenant with its first signing key'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from help" -f -a "list" -d 'List tenants'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show one tenant'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from help" -f -a "delete" -d 'Delete a tenant and everything it owns (users, apps, keys). Cannot be undone'
complete -c latchkey -n "__fish_latchkey_using_subcommand tenant; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and not __fish_seen_subcommand_from create list show delete rotate-secret help" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and not __fish_seen_subcommand_from create list show delete rotate-secret help" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and not __fish_seen_subcommand_from create list show delete rotate-secret help" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and not __fish_seen_subcommand_from create list show delete rotate-secret help" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and not __fish_seen_subcommand_from create list show delete rotate-secret help" -f -a "create" -d 'Register an application. Prints its Client ID and, once only, its Client Secret'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and not __fish_seen_subcommand_from create list show delete rotate-secret help" -f -a "list" -d 'List a tenant\'s applications'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and not __fish_seen_subcommand_from create list show delete rotate-secret help" -f -a "show" -d 'Show one application'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and not __fish_seen_subcommand_from create list show delete rotate-secret help" -f -a "delete" -d 'Delete an application; its tokens stop being accepted'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and not __fish_seen_subcommand_from create list show delete rotate-secret help" -f -a "rotate-secret" -d 'Issue a new Client Secret (shown once); the old one stops working at once'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and not __fish_seen_subcommand_from create list show delete rotate-secret help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from create" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from create" -l name -d 'Application name' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from create" -l type -d 'Kind of application' -r -f -a "web\t'Server-side web app (confidential: gets a client secret)'
spa\t'Single-page app (public: PKCE, no secret)'
native\t'Native or mobile app (public: PKCE, no secret)'
m2m\t'Machine to machine (confidential: client credentials grant only)'"
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from create" -l redirect-uri -d 'Login Redirect URL, matched character for character (repeatable)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from create" -l post-logout-redirect-uri -d 'Where /logout may send the browser afterwards (repeatable)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from create" -l cors-origin -d 'Browser origin allowed to call the token and userinfo endpoints (repeatable)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from create" -l scope -d 'API scope granted to the app (repeatable): users:invite (bulk invitations, m2m), credentials (users\' tokens may manage their passkeys through /api/credentials), introspect (a resource server that may introspect every token of the tenant)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from create" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from create" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from create" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from create" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from list" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from list" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from list" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from show" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from show" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from show" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from delete" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from delete" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from delete" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from delete" -l yes -d 'Confirm the deletion'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from delete" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from rotate-secret" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from rotate-secret" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from rotate-secret" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from rotate-secret" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from rotate-secret" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from help" -f -a "create" -d 'Register an application. Prints its Client ID and, once only, its Client Secret'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from help" -f -a "list" -d 'List a tenant\'s applications'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show one application'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from help" -f -a "delete" -d 'Delete an application; its tokens stop being accepted'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from help" -f -a "rotate-secret" -d 'Issue a new Client Secret (shown once); the old one stops working at once'
complete -c latchkey -n "__fish_latchkey_using_subcommand app; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and not __fish_seen_subcommand_from list rotate retire help" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and not __fish_seen_subcommand_from list rotate retire help" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and not __fish_seen_subcommand_from list rotate retire help" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and not __fish_seen_subcommand_from list rotate retire help" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and not __fish_seen_subcommand_from list rotate retire help" -f -a "list" -d 'List signing keys: the current one and retired ones still published in the JWKS'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and not __fish_seen_subcommand_from list rotate retire help" -f -a "rotate" -d 'Make a new key current now; the old one stays in the JWKS so issued tokens still verify'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and not __fish_seen_subcommand_from list rotate retire help" -f -a "retire" -d 'Remove a retired key from the JWKS and destroy it. Tokens it signed stop verifying'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and not __fish_seen_subcommand_from list rotate retire help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from list" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from list" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from list" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from rotate" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from rotate" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from rotate" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from rotate" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from rotate" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from retire" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from retire" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from retire" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from retire" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from retire" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from help" -f -a "list" -d 'List signing keys: the current one and retired ones still published in the JWKS'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from help" -f -a "rotate" -d 'Make a new key current now; the old one stays in the JWKS so issued tokens still verify'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from help" -f -a "retire" -d 'Remove a retired key from the JWKS and destroy it. Tokens it signed stop verifying'
complete -c latchkey -n "__fish_latchkey_using_subcommand key; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -f -a "invite" -d 'Invite a user: prints a one-time link with which they register a passkey'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -f -a "import" -d 'Invite everyone in a CSV file (header email,name[,roles]; roles separated by \';\'). Bad rows are rejected one by one and reported; the others are invited. Re-running skips users who are already present. Exit code 1 when any row was rejected'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -f -a "list" -d 'List users (filter by role or status)'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -f -a "show" -d 'Show one user'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -f -a "disable" -d 'Disable a user: they cannot sign in, and their sessions and refresh tokens end at once'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -f -a "enable" -d 'Enable a disabled user again'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -f -a "delete" -d 'Delete a user with their credentials, sessions and tokens. Cannot be undone'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -f -a "recover" -d 'Issue a one-time recovery link: the user registers a new passkey (lost device) and their other sessions end'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and not __fish_seen_subcommand_from invite import list show disable enable delete recover help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from invite" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from invite" -l email -d 'The user\'s e-mail address (their username)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from invite" -l name -d 'The user\'s display name' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from invite" -l role -d 'Role to assign (repeatable)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from invite" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from invite" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from invite" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from invite" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from import" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from import" -l links-out -d 'Write email,name,invite_url of the invited users to this CSV file' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from import" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from import" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from import" -l dry-run -d 'Check the file and report what would happen; store nothing'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from import" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from list" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from list" -l role -d 'Only users with this role' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from list" -l status -d 'Only users in this state' -r -f -a "invited\t''
active\t''
disabled\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from list" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from list" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from show" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from show" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from show" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from disable" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from disable" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from disable" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from disable" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from disable" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from enable" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from enable" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from enable" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from enable" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from enable" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from delete" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from delete" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from delete" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from delete" -l yes -d 'Confirm the deletion'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from delete" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from recover" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from recover" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from recover" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from recover" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from recover" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from help" -f -a "invite" -d 'Invite a user: prints a one-time link with which they register a passkey'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from help" -f -a "import" -d 'Invite everyone in a CSV file (header email,name[,roles]; roles separated by \';\'). Bad rows are rejected one by one and reported; the others are invited. Re-running skips users who are already present. Exit code 1 when any row was rejected'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from help" -f -a "list" -d 'List users (filter by role or status)'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show one user'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from help" -f -a "disable" -d 'Disable a user: they cannot sign in, and their sessions and refresh tokens end at once'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from help" -f -a "enable" -d 'Enable a disabled user again'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from help" -f -a "delete" -d 'Delete a user with their credentials, sessions and tokens. Cannot be undone'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from help" -f -a "recover" -d 'Issue a one-time recovery link: the user registers a new passkey (lost device) and their other sessions end'
complete -c latchkey -n "__fish_latchkey_using_subcommand user; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and not __fish_seen_subcommand_from list revoke help" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and not __fish_seen_subcommand_from list revoke help" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and not __fish_seen_subcommand_from list revoke help" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and not __fish_seen_subcommand_from list revoke help" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and not __fish_seen_subcommand_from list revoke help" -f -a "list" -d 'List a user\'s credentials'
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and not __fish_seen_subcommand_from list revoke help" -f -a "revoke" -d 'Revoke one credential (e.g. a lost device). Revoking the last one leaves the user needing a recovery link'
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and not __fish_seen_subcommand_from list revoke help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from list" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from list" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from list" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from revoke" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from revoke" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from revoke" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from revoke" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from revoke" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from help" -f -a "list" -d 'List a user\'s credentials'
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from help" -f -a "revoke" -d 'Revoke one credential (e.g. a lost device). Revoking the last one leaves the user needing a recovery link'
complete -c latchkey -n "__fish_latchkey_using_subcommand credential; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and not __fish_seen_subcommand_from create list delete assign unassign help" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and not __fish_seen_subcommand_from create list delete assign unassign help" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and not __fish_seen_subcommand_from create list delete assign unassign help" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and not __fish_seen_subcommand_from create list delete assign unassign help" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and not __fish_seen_subcommand_from create list delete assign unassign help" -f -a "create" -d 'Create a role: lowercase a-z, 0-9 and _ . : - (e.g. admin, team:billing)'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and not __fish_seen_subcommand_from create list delete assign unassign help" -f -a "list" -d 'List roles with their number of users'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and not __fish_seen_subcommand_from create list delete assign unassign help" -f -a "delete" -d 'Delete a role; users lose it'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and not __fish_seen_subcommand_from create list delete assign unassign help" -f -a "assign" -d 'Give a role to users (all or nothing: an unknown e-mail changes nobody)'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and not __fish_seen_subcommand_from create list delete assign unassign help" -f -a "unassign" -d 'Take a role from users'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and not __fish_seen_subcommand_from create list delete assign unassign help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from create" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from create" -l description -d 'What the role is for, shown by `role list`' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from create" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from create" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from create" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from create" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from list" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from list" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from list" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from delete" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from delete" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from delete" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from delete" -l yes -d 'Confirm the deletion'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from delete" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from assign" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from assign" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from assign" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from assign" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from assign" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from unassign" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from unassign" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from unassign" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from unassign" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from unassign" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from help" -f -a "create" -d 'Create a role: lowercase a-z, 0-9 and _ . : - (e.g. admin, team:billing)'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from help" -f -a "list" -d 'List roles with their number of users'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from help" -f -a "delete" -d 'Delete a role; users lose it'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from help" -f -a "assign" -d 'Give a role to users (all or nothing: an unknown e-mail changes nobody)'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from help" -f -a "unassign" -d 'Take a role from users'
complete -c latchkey -n "__fish_latchkey_using_subcommand role; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and not __fish_seen_subcommand_from enable list disable help" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and not __fish_seen_subcommand_from enable list disable help" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and not __fish_seen_subcommand_from enable list disable help" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and not __fish_seen_subcommand_from enable list disable help" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and not __fish_seen_subcommand_from enable list disable help" -f -a "enable" -d 'Enable a provider (or change its settings). The client secret is read from a file or from standard input (`-`), never from the command line, and is stored sealed'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and not __fish_seen_subcommand_from enable list disable help" -f -a "list" -d 'List the tenant\'s providers with the redirect URI to register (never their secrets)'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and not __fish_seen_subcommand_from enable list disable help" -f -a "disable" -d 'Disable a provider: its button disappears at once; users\' links are kept'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and not __fish_seen_subcommand_from enable list disable help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -l client-id -d 'The OAuth client id the provider gave you' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -l client-secret-file -d 'File holding the client secret, or - for standard input' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -l name -d 'The button\'s label; required for oidc, where it also names the provider in URLs' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -l issuer -d 'oidc: the issuer URL to discover. google: overrides https://accounts.google.com' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -l github-url -d 'github: overrides https://github.com (GitHub Enterprise Server)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -l github-api-url -d 'github: overrides https://api.github.com' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -l allowed-domain -d 'Only e-mails of this domain (repeatable); Google checks its `hd` claim' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -l allowed-org -d 'github: only active members of this organisation (repeatable)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -l create-users -d 'Create a user for an unknown verified e-mail (tenants with open registration only)'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from enable" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from list" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from list" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from list" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from disable" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from disable" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from disable" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from disable" -l yes -d 'Confirm: the stored client secret is deleted'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from disable" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from disable" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from help" -f -a "enable" -d 'Enable a provider (or change its settings). The client secret is read from a file or from standard input (`-`), never from the command line, and is stored sealed'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the tenant\'s providers with the redirect URI to register (never their secrets)'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from help" -f -a "disable" -d 'Disable a provider: its button disappears at once; users\' links are kept'
complete -c latchkey -n "__fish_latchkey_using_subcommand social; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand apply" -s f -l file -d 'The declarative configuration file' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand apply" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand apply" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand apply" -l dry-run -d 'Print the plan; change nothing'
complete -c latchkey -n "__fish_latchkey_using_subcommand apply" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand apply" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand export" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand export" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand export" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand export" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand export" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand audit" -s t -l tenant -d 'The tenant to act on, by its slug (as `latchkey tenant list` shows it)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand audit" -l since -d 'Only events of the last DURATION (e.g. 15m, 1h, 7d)' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand audit" -l user -d 'Only events about this user' -r
complete -c latchkey -n "__fish_latchkey_using_subcommand audit" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand audit" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand audit" -l follow -d 'Keep printing new events as they happen (Ctrl-C to stop)'
complete -c latchkey -n "__fish_latchkey_using_subcommand audit" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand audit" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand backup" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand backup" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand backup" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand backup" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand completions" -l socket -d 'Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else admin.socket from /etc/latchkey/config.toml, else /run/latchkey/admin.sock' -r -F
complete -c latchkey -n "__fish_latchkey_using_subcommand completions" -s o -l output -d 'Output format: tables for people, JSON for scripts' -r -f -a "table\t''
json\t''"
complete -c latchkey -n "__fish_latchkey_using_subcommand completions" -s q -l quiet -d 'Print only what was asked for: no hints, no progress'
complete -c latchkey -n "__fish_latchkey_using_subcommand completions" -s h -l help -d 'Print help'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "status" -d 'Show whether the daemon is up, its version, listener and tenant count'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "tenant" -d 'Create, list, inspect and delete tenants (one issuer each)'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "app" -d 'Register OpenID Connect client applications and manage their secrets'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "key" -d 'List, rotate and retire a tenant\'s token-signing keys'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "user" -d 'Invite users and issue recovery links'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "credential" -d 'List and revoke a user\'s passkeys and security keys'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "role" -d 'Create roles and assign them to users; they appear in the `roles` claim of tokens'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "social" -d 'Sign-in with Google, GitHub or any OpenID Connect provider, per tenant'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "apply" -d 'Create or update tenants, roles and applications from a TOML file (idempotent: a second run changes nothing). Nothing is deleted. New confidential apps\' secrets are printed once'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "export" -d 'Print a tenant\'s tenants/roles/apps configuration in the `apply` format (no secrets)'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "audit" -d 'Read the audit log: sign-ins, registrations, credential changes, token grants, admin operations'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "backup" -d 'Write a consistent online copy of the database to FILE (a new file, mode 0600). Back up the key-encryption key file separately: the copy\'s signing keys are sealed with it'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "completions" -d 'Print a shell completion script: `latchkey completions bash > /etc/bash_completion.d/latchkey`'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and not __fish_seen_subcommand_from status tenant app key user credential role social apply export audit backup completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from tenant" -f -a "create" -d 'Create a tenant with its first signing key'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from tenant" -f -a "list" -d 'List tenants'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from tenant" -f -a "show" -d 'Show one tenant'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from tenant" -f -a "delete" -d 'Delete a tenant and everything it owns (users, apps, keys). Cannot be undone'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from app" -f -a "create" -d 'Register an application. Prints its Client ID and, once only, its Client Secret'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from app" -f -a "list" -d 'List a tenant\'s applications'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from app" -f -a "show" -d 'Show one application'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from app" -f -a "delete" -d 'Delete an application; its tokens stop being accepted'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from app" -f -a "rotate-secret" -d 'Issue a new Client Secret (shown once); the old one stops working at once'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from key" -f -a "list" -d 'List signing keys: the current one and retired ones still published in the JWKS'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from key" -f -a "rotate" -d 'Make a new key current now; the old one stays in the JWKS so issued tokens still verify'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from key" -f -a "retire" -d 'Remove a retired key from the JWKS and destroy it. Tokens it signed stop verifying'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from user" -f -a "invite" -d 'Invite a user: prints a one-time link with which they register a passkey'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from user" -f -a "import" -d 'Invite everyone in a CSV file (header email,name[,roles]; roles separated by \';\'). Bad rows are rejected one by one and reported; the others are invited. Re-running skips users who are already present. Exit code 1 when any row was rejected'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from user" -f -a "list" -d 'List users (filter by role or status)'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from user" -f -a "show" -d 'Show one user'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from user" -f -a "disable" -d 'Disable a user: they cannot sign in, and their sessions and refresh tokens end at once'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from user" -f -a "enable" -d 'Enable a disabled user again'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from user" -f -a "delete" -d 'Delete a user with their credentials, sessions and tokens. Cannot be undone'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from user" -f -a "recover" -d 'Issue a one-time recovery link: the user registers a new passkey (lost device) and their other sessions end'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from credential" -f -a "list" -d 'List a user\'s credentials'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from credential" -f -a "revoke" -d 'Revoke one credential (e.g. a lost device). Revoking the last one leaves the user needing a recovery link'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from role" -f -a "create" -d 'Create a role: lowercase a-z, 0-9 and _ . : - (e.g. admin, team:billing)'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from role" -f -a "list" -d 'List roles with their number of users'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from role" -f -a "delete" -d 'Delete a role; users lose it'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from role" -f -a "assign" -d 'Give a role to users (all or nothing: an unknown e-mail changes nobody)'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from role" -f -a "unassign" -d 'Take a role from users'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from social" -f -a "enable" -d 'Enable a provider (or change its settings). The client secret is read from a file or from standard input (`-`), never from the command line, and is stored sealed'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from social" -f -a "list" -d 'List the tenant\'s providers with the redirect URI to register (never their secrets)'
complete -c latchkey -n "__fish_latchkey_using_subcommand help; and __fish_seen_subcommand_from social" -f -a "disable" -d 'Disable a provider: its button disappears at once; users\' links are kept'
