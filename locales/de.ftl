# Latchkey-Seiten, Deutsch.

## Layout
lang-menu = Sprache
noscript = Diese Seite braucht JavaScript, um mit Ihrem Passkey zu sprechen.

## Invitation and recovery
link-expired-title = Link abgelaufen
link-expired-heading = Dieser Link funktioniert nicht mehr
link-expired-body = Er ist ungültig, wurde bereits verwendet oder ist abgelaufen. Bitten Sie Ihre Administration um einen neuen.
recover-title = Konto wiederherstellen
recover-lead = Erstellen Sie einen neuen Passkey, um wieder in Ihr Konto zu gelangen. Ihre anderen angemeldeten Sitzungen werden beendet.
invite-title = Passkey erstellen
invite-lead = Anmelden ohne Passwort: Ihr Gerät verwahrt einen Passkey und entsperrt ihn mit Fingerabdruck, Gesicht oder Bildschirmsperre.
invite-welcome = Willkommen, { $name }.
invite-account = Konto: { $email }
invite-create-platform = Passkey auf diesem Gerät erstellen
invite-create-roaming = Stattdessen einen Sicherheitsschlüssel verwenden

## Account
signin-title = Anmelden
signin-lead = Verwenden Sie den Passkey auf diesem Gerät oder Ihren Sicherheitsschlüssel.
signin-button = Mit Passkey anmelden
signin-email-label = Oder geben Sie Ihre E-Mail-Adresse ein
continue = Weiter
account-title = Ihre Passkeys
account-signed-in-as = Angemeldet als { $email }.
account-advice = Fügen Sie einen zweiten Passkey oder einen Sicherheitsschlüssel als Reserve hinzu, damit Sie der Verlust eines Geräts nicht aussperrt.
account-add-platform = Passkey hinzufügen
account-add-roaming = Sicherheitsschlüssel als Reserve hinzufügen
account-other-ways = Weitere Anmeldemöglichkeiten
account-step-up = Mit Ihrem Passkey bestätigen
account-allowed-apps = Anwendungen, denen Sie Zugriff erlaubt haben
account-allowed-since = seit { $date }
account-revoke = Widerrufen

## Authorization
login-heading = Bei { $app } anmelden
login-lead = um mit { $app } fortzufahren
login-step-up-bound = { $app } verlangt einen Passkey, der auf seinem Gerät bleibt, oder einen Sicherheitsschlüssel: Ein zwischen Geräten synchronisierter Passkey genügt hier nicht.
login-step-up-passkey = { $app } verlangt eine Anmeldung mit Passkey.
login-email-label = E-Mail-Adresse
login-continue = Mit Passkey fortfahren
login-no-email = Mit Passkey anmelden (ohne E-Mail-Adresse)
social-continue = Weiter mit { $provider }
select-title = Konto auswählen
select-continue-as = Weiter als { $name }
select-another = Anderes Konto verwenden
consent-title = Zugriff erlauben
consent-heading = { $app } erlauben?
consent-asks = { $app } möchte:
consent-signed-in = Angemeldet als { $email }. Sie können dies auf Ihrer Kontoseite widerrufen.
consent-allow = Erlauben
consent-deny = Ablehnen
consent-logo = Logo von { $app }
scope-openid = Wissen, wer Sie sind, wenn Sie sich anmelden
scope-profile = Ihren Namen und Ihr Bild sehen
scope-email = Ihre E-Mail-Adresse sehen
scope-offline = Zugriff behalten, wenn Sie hier nicht angemeldet sind, bis Sie ihn widerrufen
scope-credentials = Ihre Passkeys sehen und verwalten
scope-other = Eine Schnittstelle in Ihrem Namen nutzen
step-up-title = Eine stärkere Anmeldung ist nötig
step-up-bound = { $app } verlangt einen Passkey, der auf seinem Gerät bleibt, oder einen Sicherheitsschlüssel. Ihr Konto hat nur zwischen Geräten synchronisierte Passkeys.
step-up-passkey = { $app } verlangt eine Anmeldung mit Passkey. Ihr Konto hat keinen.
step-up-add = Fügen Sie auf Ihrer Kontoseite einen hinzu und melden Sie sich dann erneut bei { $app } an.
step-up-account-link = Kontoseite öffnen
step-up-back = Zurück zu { $app }
invalid-redirect-title = Ungültige Weiterleitungsadresse
invalid-redirect-body = Die Anwendung hat Sie mit einer Adresse hierher geschickt, die sie nicht registriert hat, daher werden Sie nicht zurückgeleitet. Wenden Sie sich an die Administration der Anwendung.
expired-title = Anmeldung abgelaufen
expired-heading = Diese Anmeldung ist abgelaufen
expired-body = Kehren Sie zur Anwendung zurück und melden Sie sich erneut an.

## Social links
link-confirm-title = Konto verknüpfen
link-confirm-heading = Ihr { $provider }-Konto verknüpfen?
link-confirm-signed-in = { $provider } hat Sie als { $name } angemeldet.
link-confirm-body = Nach der Verknüpfung meldet dieses { $provider }-Konto Sie hier als { $email } an, ohne Ihren Passkey. Verknüpfen Sie es nur, wenn es Ihnen gehört.
link-confirm-button = { $provider }-Konto verknüpfen
cancel = Abbrechen

## Sign-out
signout-title = Abmelden
signout-heading = Abmelden?
signout-question = Möchten Sie sich auf diesem Gerät von { $tenant } abmelden?
signout-button = Abmelden
signed-out-title = Abgemeldet
signed-out-heading = Sie sind abgemeldet
close-window = Sie können dieses Fenster schließen.

## Device authorization
device-title = Auf Ihrem Gerät anmelden
device-enter-code = Geben Sie den Code ein, den Ihr Gerät anzeigt.
device-code-label = Code
device-signin-to = Melden Sie sich an, um fortzufahren mit:
device-asks = Diese Anwendung möchte sich anmelden als:
device-with = mit:
device-code-check = Prüfen Sie, ob dieser Code mit dem auf Ihrem Gerät übereinstimmt. Erlauben Sie nur, wenn das so ist und Sie diese Anmeldung begonnen haben.
device-approve = Erlauben
device-deny = Ablehnen

## Errors
error-title = Fehler
error-heading = Etwas ist schiefgelaufen

# The one-time offer of a passkey after a social sign-in
offer-passkey-title = Passkey hinzufügen
offer-passkey-heading = Beim nächsten Mal schneller anmelden
offer-passkey-body = Fügen Sie diesem Konto einen Passkey hinzu: Beim nächsten Mal melden Sie sich mit Fingerabdruck, Gesicht oder Bildschirmsperre an – ohne Umweg über ein anderes Konto.
offer-passkey-add = Passkey hinzufügen
offer-passkey-skip = Jetzt nicht

## Messages the page script shows
js-server-error = Der Server konnte die Anfrage nicht ausführen.
js-not-allowed = Die Passkey-Anfrage wurde abgebrochen oder ist abgelaufen, oder diese Seite hat nicht die Adresse, zu der der Passkey gehört. Sie können es erneut versuchen.
js-invalid-state = Dieser Authenticator ist bereits für Ihr Konto registriert.
js-security = Die Adresse dieser Seite darf keine Passkeys für dieses Konto verwenden.
js-not-supported = Dieser Authenticator unterstützt die verlangte Art von Passkey nicht.
js-authenticator-not-allowed = Ihre Organisation akzeptiert nur Sicherheitsschlüssel und Geräte, die sie zugelassen hat, und dieses gehört nicht dazu. Verwenden Sie einen zugelassenen Sicherheitsschlüssel oder fragen Sie Ihre Administration, welche zugelassen sind.
js-abort = Die Passkey-Anfrage wurde unterbrochen. Sie können es erneut versuchen.
js-generic = Etwas ist schiefgelaufen.
js-tap-key = Stecken Sie Ihren Sicherheitsschlüssel ein oder berühren Sie ihn…
js-follow-device = Folgen Sie den Anweisungen Ihres Geräts…
js-passkey-ready = Ihr Passkey ist bereit. Sie werden angemeldet…
js-choose-passkey = Wählen Sie Ihren Passkey…
js-checking-code = Der Code wird geprüft…
js-approved = Erlaubt: Ihr Gerät wird jetzt angemeldet.
js-denied = Abgelehnt: Ihr Gerät wird nicht angemeldet.
js-security-key = Sicherheitsschlüssel
js-passkey = Passkey
js-added = hinzugefügt
js-rename = Umbenennen
js-remove = Entfernen
js-only-one = Fügen Sie einen weiteren Passkey oder Sicherheitsschlüssel hinzu, bevor Sie Ihren einzigen entfernen.
js-removed = Entfernt.
js-new-name = Neuer Name
js-save = Speichern
js-renamed = Umbenannt.
js-key-added = Sicherheitsschlüssel hinzugefügt.
js-passkey-added = Passkey hinzugefügt.
js-unlink = Trennen
js-link = Verknüpfen
js-link-add-first = Um eine weitere Anmeldemöglichkeit zu verknüpfen, fügen Sie zuerst oben einen Passkey hinzu und verknüpfen Sie dann erneut.
js-link-confirm-first = Um eine weitere Anmeldemöglichkeit zu verknüpfen, bestätigen Sie zuerst mit Ihrem Passkey, dass Sie es sind.
js-unlinked = Getrennt.
js-unsupported-browser = Dieser Browser unterstützt keine Passkeys. Verwenden Sie eine aktuelle Version von Chrome, Safari, Edge oder Firefox.

## E-mails (plain text)
mail-hello = Hallo { $name },
mail-invite-subject = Ihre Einladung zu { $tenant }
mail-invite-lead = Erstellen Sie über diesen Link Ihren Passkey und melden Sie sich ohne Passwort an.
mail-recover-subject = Ihr Konto bei { $tenant } wiederherstellen
mail-recover-lead = Registrieren Sie über diesen Link einen neuen Passkey für Ihr Konto.
mail-once = Der Link funktioniert einmal. Wenn Sie diese Nachricht nicht erwartet haben, ignorieren Sie sie.
mail-link-subject = Anmeldung mit { $provider } zu Ihrem Konto bei { $tenant } hinzugefügt
mail-link-body = Sie können sich jetzt mit { $provider } ({ $account }) bei Ihrem Konto bei { $tenant } anmelden.
mail-link-warning = Wenn Sie das nicht waren, melden Sie sich unter { $url } mit Ihrem Passkey an, trennen Sie { $provider } und informieren Sie Ihre Administration.
