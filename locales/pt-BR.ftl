# Páginas do Latchkey, português do Brasil.

## Layout
lang-menu = Idioma
noscript = Esta página precisa de JavaScript para se comunicar com a sua chave de acesso.

## Invitation and recovery
link-expired-title = Link expirado
link-expired-heading = Este link não funciona mais
link-expired-body = Ele é inválido, já foi usado ou expirou. Peça um novo ao seu administrador.
recover-title = Recuperar sua conta
recover-lead = Crie uma nova chave de acesso para voltar a entrar na sua conta. Suas outras sessões abertas serão encerradas.
invite-title = Criar sua chave de acesso
invite-lead = Entre sem senha: seu dispositivo guarda uma chave de acesso e a desbloqueia com sua digital, seu rosto ou o bloqueio de tela.
invite-welcome = Boas-vindas, { $name }.
invite-account = Conta: { $email }
invite-create-platform = Criar uma chave de acesso neste dispositivo
invite-create-roaming = Usar uma chave de segurança

## Account
signin-title = Entrar
signin-lead = Use a chave de acesso deste dispositivo ou sua chave de segurança.
signin-button = Entrar com uma chave de acesso
signin-email-label = Ou digite seu e-mail
continue = Continuar
account-title = Suas chaves de acesso
account-signed-in-as = Conectado como { $email }.
account-advice = Adicione uma segunda chave de acesso ou uma chave de segurança reserva, para que perder um dispositivo não bloqueie seu acesso.
account-add-platform = Adicionar uma chave de acesso
account-add-roaming = Adicionar uma chave de segurança reserva
account-other-ways = Outras formas de entrar
account-step-up = Confirmar com sua chave de acesso
account-allowed-apps = Aplicativos que você autorizou
account-allowed-since = desde { $date }
account-revoke = Revogar

## Authorization
login-heading = Entrar em { $app }
login-lead = para continuar em { $app }
login-step-up-bound = { $app } pede uma chave de acesso que fique no próprio dispositivo, ou uma chave de segurança: uma chave de acesso sincronizada entre dispositivos não serve aqui.
login-step-up-passkey = { $app } pede que você entre com uma chave de acesso.
login-email-label = E-mail
login-continue = Continuar com uma chave de acesso
login-no-email = Entrar com uma chave de acesso (sem e-mail)
social-continue = Continuar com { $provider }
select-title = Escolher uma conta
select-continue-as = Continuar como { $name }
select-another = Usar outra conta
consent-title = Permitir acesso
consent-heading = Permitir { $app }?
consent-asks = { $app } pede para:
consent-signed-in = Conectado como { $email }. Você pode revogar isso na página da sua conta.
consent-allow = Permitir
consent-deny = Recusar
consent-logo = Logotipo de { $app }
scope-openid = Saber quem você é quando você entra
scope-profile = Ver seu nome e sua foto
scope-email = Ver seu endereço de e-mail
scope-offline = Manter o acesso quando você não estiver conectado aqui, até você revogá-lo
scope-credentials = Ver e gerenciar suas chaves de acesso
scope-other = Usar uma API em seu nome
step-up-title = É preciso uma entrada mais forte
step-up-bound = { $app } pede uma chave de acesso que fique no próprio dispositivo, ou uma chave de segurança. Sua conta só tem chaves de acesso sincronizadas entre dispositivos.
step-up-passkey = { $app } pede que você entre com uma chave de acesso. Sua conta não tem nenhuma.
step-up-add = Adicione uma na página da sua conta e entre em { $app } de novo.
step-up-account-link = Abrir a página da sua conta
step-up-back = Voltar para { $app }
invalid-redirect-title = Endereço de redirecionamento inválido
invalid-redirect-body = O aplicativo trouxe você até aqui com um endereço que ele não registrou, por isso você não é enviado de volta. Avise o administrador do aplicativo.
expired-title = Entrada expirada
expired-heading = Esta entrada expirou
expired-body = Volte ao aplicativo e entre novamente.

## Social links
link-confirm-title = Vincular uma conta
link-confirm-heading = Vincular sua conta { $provider }?
link-confirm-signed-in = { $provider } identificou você como { $name }.
link-confirm-body = Depois de vinculada, esta conta { $provider } entra aqui como { $email }, sem a sua chave de acesso. Vincule-a somente se ela for sua.
link-confirm-button = Vincular conta { $provider }
cancel = Cancelar

## Sign-out
signout-title = Sair
signout-heading = Sair?
signout-question = Deseja sair de { $tenant } neste dispositivo?
signout-button = Sair
signed-out-title = Desconectado
signed-out-heading = Você saiu
close-window = Você pode fechar esta janela.

## Device authorization
device-title = Entrar no seu dispositivo
device-enter-code = Digite o código que o seu dispositivo mostra.
device-code-label = Código
device-signin-to = Entre para continuar em:
device-asks = Este aplicativo pede para entrar como:
device-with = com:
device-code-check = Confira se este código é igual ao que o seu dispositivo mostra. Aprove somente se for e se foi você quem iniciou esta entrada.
device-approve = Aprovar
device-deny = Recusar

## Errors
error-title = Erro
error-heading = Algo deu errado

# The one-time offer of a passkey after a social sign-in
offer-passkey-title = Adicionar uma chave de acesso
offer-passkey-heading = Entre mais rápido da próxima vez
offer-passkey-body = Adicione uma chave de acesso a esta conta: da próxima vez, você entra com sua digital, seu rosto ou o bloqueio de tela, sem passar por outra conta.
offer-passkey-add = Adicionar uma chave de acesso
offer-passkey-skip = Agora não

## Messages the page script shows
js-server-error = O servidor não conseguiu concluir a solicitação.
js-not-allowed = A solicitação da chave de acesso foi cancelada ou expirou, ou esta página não está no endereço ao qual a chave pertence. Você pode tentar de novo.
js-invalid-state = Este autenticador já está registrado na sua conta.
js-security = O endereço desta página não pode usar chaves de acesso desta conta.
js-not-supported = Este autenticador não é compatível com o tipo de chave de acesso exigido.
js-authenticator-not-allowed = Sua organização aceita apenas chaves de segurança e dispositivos aprovados por ela, e este não está entre eles. Use uma chave de segurança aprovada ou pergunte ao administrador quais são.
js-abort = A solicitação da chave de acesso foi interrompida. Você pode tentar de novo.
js-generic = Algo deu errado.
js-tap-key = Insira ou toque na sua chave de segurança…
js-follow-device = Siga as instruções do seu dispositivo…
js-passkey-ready = Sua chave de acesso está pronta. Entrando…
js-choose-passkey = Escolha sua chave de acesso…
js-checking-code = Verificando o código…
js-approved = Aprovado: seu dispositivo está entrando agora.
js-denied = Recusado: seu dispositivo não vai entrar.
js-security-key = Chave de segurança
js-passkey = Chave de acesso
js-added = adicionada em
js-rename = Renomear
js-remove = Remover
js-only-one = Adicione outra chave de acesso ou chave de segurança antes de remover a única que você tem.
js-removed = Removida.
js-new-name = Novo nome
js-save = Salvar
js-renamed = Renomeada.
js-key-added = Chave de segurança adicionada.
js-passkey-added = Chave de acesso adicionada.
js-unlink = Desvincular
js-link = Vincular
js-link-add-first = Para vincular outra forma de entrar, adicione primeiro uma chave de acesso acima e vincule de novo.
js-link-confirm-first = Para vincular outra forma de entrar, confirme primeiro que é você com a sua chave de acesso.
js-unlinked = Desvinculada.
js-unsupported-browser = Este navegador não é compatível com chaves de acesso. Use uma versão atual do Chrome, Safari, Edge ou Firefox.

## E-mails (plain text)
mail-hello = Olá, { $name },
mail-invite-subject = Você foi convidado para { $tenant }
mail-invite-lead = Use este link para criar sua chave de acesso e entrar sem senha.
mail-recover-subject = Recuperar sua conta em { $tenant }
mail-recover-lead = Use este link para registrar uma nova chave de acesso na sua conta.
mail-once = O link funciona uma única vez. Se você não esperava esta mensagem, ignore-a.
mail-link-subject = Entrada com { $provider } adicionada à sua conta em { $tenant }
mail-link-body = Agora você pode entrar na sua conta em { $tenant } com { $provider } ({ $account }).
mail-link-warning = Se não foi você, entre com sua chave de acesso em { $url }, desvincule { $provider } e avise o seu administrador.
