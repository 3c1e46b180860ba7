# Latchkey's hosted pages, English (the reference catalogue: every other locale has exactly
# these messages). Variables: $tenant, $app, $name, $email, $provider.

## Layout
lang-menu = Language
noscript = This page needs JavaScript to talk to your passkey.

## Invitation and recovery
link-expired-title = Link expired
link-expired-heading = This link no longer works
link-expired-body = It is invalid, has been used, or has expired. Ask your administrator for a new one.
recover-title = Recover your account
recover-lead = Create a new passkey to get back into your account. Your other signed-in sessions will end.
invite-title = Create your passkey
invite-lead = Sign in without a password: your device keeps a passkey and unlocks it with your fingerprint, face or screen lock.
invite-welcome = Welcome, { $name }.
invite-account = Account: { $email }
invite-create-platform = Create a passkey on this device
invite-create-roaming = Use a security key instead

## Account
signin-title = Sign in
signin-lead = Use the passkey on this device or your security key.
signin-button = Sign in with a passkey
signin-email-label = Or enter your e-mail
continue = Continue
account-title = Your passkeys
account-signed-in-as = Signed in as { $email }.
account-advice = Add a second passkey or a security key as a backup, so that losing one device does not lock you out.
account-add-platform = Add a passkey
account-add-roaming = Add a backup security key
account-other-ways = Other ways to sign in
account-step-up = Confirm with your passkey
account-allowed-apps = Applications you allowed
account-allowed-since = since { $date }
account-revoke = Revoke

## Authorization
login-heading = Sign in to { $app }
login-lead = to continue to { $app }
login-step-up-bound = { $app } asks for a passkey that stays on its device, or a security key: a passkey synced between devices will not do here.
login-step-up-passkey = { $app } asks for a sign-in with a passkey.
login-email-label = E-mail
login-continue = Continue with a passkey
login-no-email = Sign in with a passkey (no e-mail)
social-continue = Continue with { $provider }
select-title = Choose an account
select-continue-as = Continue as { $name }
select-another = Use another account
consent-title = Allow access
consent-heading = Allow { $app }?
consent-asks = { $app } asks to:
consent-signed-in = Signed in as { $email }. You can revoke this on your account page.
consent-allow = Allow
consent-deny = Deny
consent-logo = { $app } logo
scope-openid = Know who you are when you sign in
scope-profile = See your name and picture
scope-email = See your e-mail address
scope-offline = Keep access when you are not signed in here, until you revoke it
scope-credentials = See and manage your passkeys
scope-other = Use an API on your behalf
step-up-title = A stronger sign-in is needed
step-up-bound = { $app } asks for a passkey that stays on its device, or a security key. Your account has only passkeys synced between devices.
step-up-passkey = { $app } asks for a sign-in with a passkey. Your account has none.
step-up-add = Add one on your account page, then sign in to { $app } again.
step-up-account-link = Open your account page
step-up-back = Back to { $app }
invalid-redirect-title = Invalid redirect URI
invalid-redirect-body = The application sent you here with an address it has not registered, so you are not sent back. Tell the application's administrator.
expired-title = Sign-in expired
expired-heading = This sign-in has expired
expired-body = Go back to the application and sign in again.

## Social links
link-confirm-title = Link an account
link-confirm-heading = Link your { $provider } account?
link-confirm-signed-in = { $provider } signed you in as { $name }.
link-confirm-body = Once linked, this { $provider } account signs in to { $email } here, without your passkey. Link it only if it is yours.
link-confirm-button = Link { $provider } account
cancel = Cancel

## Sign-out
signout-title = Sign out
signout-heading = Sign out?
signout-question = Do you want to sign out of { $tenant } on this device?
signout-button = Sign out
signed-out-title = Signed out
signed-out-heading = You are signed out
close-window = You can close this window.

## Device authorization
device-title = Sign in on your device
device-enter-code = Enter the code your device shows.
device-code-label = Code
device-signin-to = Sign in to continue to:
device-asks = This application asks to sign in as:
device-with = with:
device-code-check = Check that this code matches the code your device shows. Approve only if it does and you started this sign-in.
device-approve = Approve
device-deny = Deny

## Errors
error-title = Error
error-heading = Something went wrong

# The one-time offer of a passkey after a social sign-in
offer-passkey-title = Add a passkey
offer-passkey-heading = Sign in faster next time
offer-passkey-body = Add a passkey to this account: next time you sign in with your fingerprint, face or screen lock, without going through another account.
offer-passkey-add = Add a passkey
offer-passkey-skip = Not now

## Messages the page script shows
js-server-error = The server could not complete the request.
js-not-allowed = The passkey request was cancelled or timed out, or this page is not on the address the passkey belongs to. You can try again.
js-invalid-state = This authenticator is already registered to your account.
js-security = This page's address is not allowed to use passkeys for this account.
js-not-supported = This authenticator does not support the required passkey type.
js-authenticator-not-allowed = Your organisation accepts only security keys and devices it has approved, and this one is not among them. Use an approved security key, or ask your administrator which ones are.
js-abort = The passkey request was interrupted. You can try again.
js-generic = Something went wrong.
js-tap-key = Insert or tap your security key…
js-follow-device = Follow your device's prompt…
js-passkey-ready = Your passkey is ready. Signing you in…
js-choose-passkey = Choose your passkey…
js-checking-code = Checking the code…
js-approved = Approved: your device is signing in now.
js-denied = Denied: your device will not be signed in.
js-security-key = Security key
js-passkey = Passkey
js-added = added
js-rename = Rename
js-remove = Remove
js-only-one = Add another passkey or security key before removing your only one.
js-removed = Removed.
js-new-name = New name
js-save = Save
js-renamed = Renamed.
js-key-added = Security key added.
js-passkey-added = Passkey added.
js-unlink = Unlink
js-link = Link
js-link-add-first = To link another way to sign in, first add a passkey above, then link again.
js-link-confirm-first = To link another way to sign in, first confirm it is you with your passkey.
js-unlinked = Unlinked.
js-unsupported-browser = This browser does not support passkeys. Use a current version of Chrome, Safari, Edge or Firefox.

## E-mails (plain text)
mail-hello = Hello { $name },
mail-invite-subject = You are invited to { $tenant }
mail-invite-lead = Use this link to create your passkey and sign in without a password.
mail-recover-subject = Recover your { $tenant } account
mail-recover-lead = Use this link to register a new passkey for your account.
mail-once = The link works once. If you did not expect this message, ignore it.
mail-link-subject = { $provider } sign-in added to your { $tenant } account
mail-link-body = You can now sign in to your { $tenant } account with { $provider } ({ $account }).
mail-link-warning = If this was not you, sign in with your passkey at { $url } and unlink { $provider }, then tell your administrator.
