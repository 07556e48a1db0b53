// Self-signed, for vendor.pin.test only (valid to 2046; the same pair as ai-pinned-outbound.test.ts): the
// pinned https checks trust it as their CA, so a certificate for the name is verified, and one for
// another name is not.
export const PIN_CERT = `-----BEGIN CERTIFICATE-----
MIIBpDCCAUugAwIBAgIUSkjEXhOeGFMFB9LVsxT8UDvjgAwwCgYIKoZIzj0EAwIw
GjEYMBYGA1UEAwwPdmVuZG9yLnBpbi50ZXN0MB4XDTI2MTEyMjAxMDc0NFoXDTQ2
MTExNzAxMDc0NFowGjEYMBYGA1UEAwwPdmVuZG9yLnBpbi50ZXN0MFkwEwYHKoZI
zj0CAQYIKoZIzj0DAQcDQgAEDSUQHmqRf47Et3HukGtqcScTkQzOqJoofJ++mHL1
5glRrwKCEXHNRoh2/KeV5lsRXcygeYGIJmjJ2EeqwWL57qNvMG0wHQYDVR0OBBYE
FIj96zqmAl5b/trUdgzXHGnxm50dMB8GA1UdIwQYMBaAFIj96zqmAl5b/trUdgzX
HGnxm50dMA8GA1UdEwEB/wQFMAMBAf8wGgYDVR0RBBMwEYIPdmVuZG9yLnBpbi50
ZXN0MAoGCCqGSM49BAMCA0cAMEQCICiisZ+pNPbRY7JcYWEfIKSmXHrwJNc7hv74
lr1OtbnFAiBYw/qndHivMOjj+Jq358wa1CqJHx0eaN5DkHTuhbnrXg==
-----END CERTIFICATE-----
`;
export const PIN_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgUprvJFvL2h+FEI+X
xbE329nfz8hCv+nQWCe6ZIBtSeKhRANCAAQNJRAeapF/jsS3ce6Qa2pxJxORDM6o
mih8n76YcvXmCVGvAoIRcc1GiHb8p5XmWxFdzKB5gYgmaMnYR6rBYvnu
-----END PRIVATE KEY-----
`;
