# Pages de Latchkey, français.

## Layout
lang-menu = Langue
noscript = Cette page a besoin de JavaScript pour dialoguer avec votre clé d’accès.

## Invitation and recovery
link-expired-title = Lien expiré
link-expired-heading = Ce lien ne fonctionne plus
link-expired-body = Il est invalide, a déjà servi ou a expiré. Demandez-en un nouveau à votre administrateur.
recover-title = Récupérer votre compte
recover-lead = Créez une nouvelle clé d’accès pour retrouver l’accès à votre compte. Vos autres sessions ouvertes seront fermées.
invite-title = Créer votre clé d’accès
invite-lead = Connectez-vous sans mot de passe : votre appareil garde une clé d’accès et la déverrouille avec votre empreinte, votre visage ou le verrouillage de l’écran.
invite-welcome = Bienvenue, { $name }.
invite-account = Compte : { $email }
invite-create-platform = Créer une clé d’accès sur cet appareil
invite-create-roaming = Utiliser plutôt une clé de sécurité

## Account
signin-title = Connexion
signin-lead = Utilisez la clé d’accès de cet appareil ou votre clé de sécurité.
signin-button = Se connecter avec une clé d’accès
signin-email-label = Ou saisissez votre adresse e-mail
continue = Continuer
account-title = Vos clés d’accès
account-signed-in-as = Connecté en tant que { $email }.
account-advice = Ajoutez une deuxième clé d’accès ou une clé de sécurité de secours : la perte d’un appareil ne vous bloquera pas.
account-add-platform = Ajouter une clé d’accès
account-add-roaming = Ajouter une clé de sécurité de secours
account-other-ways = Autres moyens de connexion
account-step-up = Confirmer avec votre clé d’accès
account-allowed-apps = Applications que vous avez autorisées
account-allowed-since = depuis le { $date }
account-revoke = Révoquer

## Authorization
login-heading = Se connecter à { $app }
login-lead = pour continuer vers { $app }
login-step-up-bound = { $app } demande une clé d’accès qui reste sur son appareil, ou une clé de sécurité : une clé d’accès synchronisée entre appareils ne convient pas ici.
login-step-up-passkey = { $app } demande une connexion avec une clé d’accès.
login-email-label = Adresse e-mail
login-continue = Continuer avec une clé d’accès
login-no-email = Se connecter avec une clé d’accès (sans e-mail)
social-continue = Continuer avec { $provider }
select-title = Choisir un compte
select-continue-as = Continuer en tant que { $name }
select-another = Utiliser un autre compte
consent-title = Autoriser l’accès
consent-heading = Autoriser { $app } ?
consent-asks = { $app } demande à :
consent-signed-in = Connecté en tant que { $email }. Vous pouvez révoquer cette autorisation depuis votre page de compte.
consent-allow = Autoriser
consent-deny = Refuser
consent-logo = Logo de { $app }
scope-openid = Savoir qui vous êtes lorsque vous vous connectez
scope-profile = Voir votre nom et votre photo
scope-email = Voir votre adresse e-mail
scope-offline = Garder l’accès quand vous n’êtes pas connecté ici, jusqu’à ce que vous le révoquiez
scope-credentials = Voir et gérer vos clés d’accès
scope-other = Utiliser une API en votre nom
step-up-title = Une connexion plus forte est nécessaire
step-up-bound = { $app } demande une clé d’accès qui reste sur son appareil, ou une clé de sécurité. Votre compte n’a que des clés d’accès synchronisées entre appareils.
step-up-passkey = { $app } demande une connexion avec une clé d’accès. Votre compte n’en a aucune.
step-up-add = Ajoutez-en une depuis votre page de compte, puis reconnectez-vous à { $app }.
step-up-account-link = Ouvrir votre page de compte
step-up-back = Retour à { $app }
invalid-redirect-title = Adresse de redirection invalide
invalid-redirect-body = L’application vous a envoyé ici avec une adresse qu’elle n’a pas enregistrée ; vous n’y êtes donc pas renvoyé. Prévenez l’administrateur de l’application.
expired-title = Connexion expirée
expired-heading = Cette connexion a expiré
expired-body = Revenez à l’application et connectez-vous à nouveau.

## Social links
link-confirm-title = Associer un compte
link-confirm-heading = Associer votre compte { $provider } ?
link-confirm-signed-in = { $provider } vous a connecté en tant que { $name }.
link-confirm-body = Une fois associé, ce compte { $provider } vous connecte ici en tant que { $email }, sans votre clé d’accès. Ne l’associez que s’il vous appartient.
link-confirm-button = Associer le compte { $provider }
cancel = Annuler

## Sign-out
signout-title = Déconnexion
signout-heading = Se déconnecter ?
signout-question = Voulez-vous vous déconnecter de { $tenant } sur cet appareil ?
signout-button = Se déconnecter
signed-out-title = Déconnecté
signed-out-heading = Vous êtes déconnecté
close-window = Vous pouvez fermer cette fenêtre.

## Device authorization
device-title = Connexion sur votre appareil
device-enter-code = Saisissez le code affiché par votre appareil.
device-code-label = Code
device-signin-to = Connectez-vous pour continuer vers :
device-asks = Cette application demande à se connecter en tant que :
device-with = avec :
device-code-check = Vérifiez que ce code correspond à celui affiché par votre appareil. N’autorisez que si c’est le cas et que vous avez lancé cette connexion.
device-approve = Autoriser
device-deny = Refuser

## Errors
error-title = Erreur
error-heading = Un problème est survenu

# The one-time offer of a passkey after a social sign-in
offer-passkey-title = Ajouter une clé d’accès
offer-passkey-heading = Connectez-vous plus vite la prochaine fois
offer-passkey-body = Ajoutez une clé d’accès à ce compte : la prochaine fois, vous vous connecterez avec votre empreinte, votre visage ou le verrouillage de l’écran, sans passer par un autre compte.
offer-passkey-add = Ajouter une clé d’accès
offer-passkey-skip = Pas maintenant

## Messages the page script shows
js-server-error = Le serveur n’a pas pu traiter la demande.
js-not-allowed = La demande de clé d’accès a été annulée ou a expiré, ou cette page n’est pas à l’adresse à laquelle la clé appartient. Vous pouvez réessayer.
js-invalid-state = Cet authentificateur est déjà enregistré sur votre compte.
js-security = L’adresse de cette page n’est pas autorisée à utiliser les clés d’accès de ce compte.
js-not-supported = Cet authentificateur ne prend pas en charge le type de clé d’accès requis.
js-authenticator-not-allowed = Votre organisation n’accepte que les clés de sécurité et appareils qu’elle a approuvés, et celui-ci n’en fait pas partie. Utilisez une clé de sécurité approuvée ou demandez à votre administrateur lesquelles le sont.
js-abort = La demande de clé d’accès a été interrompue. Vous pouvez réessayer.
js-generic = Un problème est survenu.
js-tap-key = Insérez ou touchez votre clé de sécurité…
js-follow-device = Suivez les instructions de votre appareil…
js-passkey-ready = Votre clé d’accès est prête. Connexion en cours…
js-choose-passkey = Choisissez votre clé d’accès…
js-checking-code = Vérification du code…
js-approved = Autorisé : votre appareil se connecte maintenant.
js-denied = Refusé : votre appareil ne sera pas connecté.
js-security-key = Clé de sécurité
js-passkey = Clé d’accès
js-added = ajoutée le
js-rename = Renommer
js-remove = Supprimer
js-only-one = Ajoutez une autre clé d’accès ou clé de sécurité avant de supprimer votre seule clé.
js-removed = Supprimée.
js-new-name = Nouveau nom
js-save = Enregistrer
js-renamed = Renommée.
js-key-added = Clé de sécurité ajoutée.
js-passkey-added = Clé d’accès ajoutée.
js-unlink = Dissocier
js-link = Associer
js-link-add-first = Pour associer un autre moyen de connexion, ajoutez d’abord une clé d’accès ci-dessus, puis recommencez.
js-link-confirm-first = Pour associer un autre moyen de connexion, confirmez d’abord votre identité avec votre clé d’accès.
js-unlinked = Dissocié.
js-unsupported-browser = Ce navigateur ne prend pas en charge les clés d’accès. Utilisez une version récente de Chrome, Safari, Edge ou Firefox.

## E-mails (plain text)
mail-hello = Bonjour { $name },
mail-invite-subject = Vous êtes invité sur { $tenant }
mail-invite-lead = Utilisez ce lien pour créer votre clé d’accès et vous connecter sans mot de passe.
mail-recover-subject = Récupérer votre compte { $tenant }
mail-recover-lead = Utilisez ce lien pour enregistrer une nouvelle clé d’accès pour votre compte.
mail-once = Le lien ne fonctionne qu’une fois. Si vous n’attendiez pas ce message, ignorez-le.
mail-link-subject = Connexion avec { $provider } ajoutée à votre compte { $tenant }
mail-link-body = Vous pouvez désormais vous connecter à votre compte { $tenant } avec { $provider } ({ $account }).
mail-link-warning = Si ce n’était pas vous, connectez-vous avec votre clé d’accès sur { $url }, dissociez { $provider }, puis prévenez votre administrateur.
