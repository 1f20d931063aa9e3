/*
 * cv_keyfile — the deployment's key file for encryption at rest
 * (cv_seal.h), named by CONVERGE_SECRET_KEY_FILE: read at start by every
 * program (cv_opts_from_env) and read again by the long-running ones when
 * it changes, so that a rotation (docs/security.md "Encryption at rest")
 * needs no restart.
 *
 * The file must be a regular file that others cannot read (mode 0600 or
 * 0640): one holding every stack's secrets is refused when it is 0644.
 */
#ifndef CV_KEYFILE_H
#define CV_KEYFILE_H

#include <stddef.h>

/* Reads the key file `path` and makes its key ring the process's. 0, or
 * CV_EINVAL with errstr naming the file and what is wrong. */
int cv_keyfile_load(const char *path, char *errstr, size_t errstr_size);

/* Reads the key file loaded last again when its modification time, size or
 * inode changed since; a file now bad is logged and the ring kept. Returns
 * 1 when the ring changed, else 0. Nothing without a key file. */
int cv_keyfile_refresh(void);

#endif
