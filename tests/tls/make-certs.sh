#!/bin/sh
# Writes the certificates the TLS tests use into the directory given (created if missing):
#   ca.crt        a test CA                      ca.key
#   server.crt    "localhost" (DNS name only), signed by the CA, with server.key
#   client.crt    CN=flexiq-client, signed by the CA, with client.key
#   other-ca.crt  an unrelated CA, which signed none of them
# Needs the openssl command line tool. EC P-256 keys: quick to make, understood by PostgreSQL
# and by rustls.
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# ca <name> <subject>
ca() {
    key "$1.key"
    openssl req -x509 -new -key "$1.key" -subj "$2" -days 30 -out "$1.crt" \
        -addext basicConstraints=critical,CA:TRUE \
        -addext keyUsage=critical,keyCertSign,cRLSign
}

# leaf <name> <subject> <extended key usage> [subjectAltName]
leaf() {
    key "$1.key"
    openssl req -new -key "$1.key" -subj "$2" -out "$1.csr"
    {
        echo "basicConstraints=critical,CA:FALSE"
        echo "keyUsage=critical,digitalSignature"
        echo "extendedKeyUsage=$3"
        [ $# -lt 4 ] || echo "subjectAltName=$4"
    } > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -set_serial "0x$(openssl rand -hex 8)" \
        -days 30 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
    rm "$1.csr" "$1.ext"
}

ca ca "/CN=FlexiQ test CA"
ca other-ca "/CN=FlexiQ unrelated test CA"
leaf server "/CN=localhost" serverAuth DNS:localhost
leaf client "/CN=flexiq-client" clientAuth
