/* SPDX-License-Identifier: MIT */
/*
 * wl_lazy.h: the functions libwl_lazy.so defines and wl_lazy calls, one X(i) each. 64: the most
 * events one run of wl_lazy fires (each function's first call is resolved once).
 */
#ifndef STK_WL_LAZY_H
#define STK_WL_LAZY_H

#define X8(b) X(b##0) X(b##1) X(b##2) X(b##3) X(b##4) X(b##5) X(b##6) X(b##7)
#define WL_LAZY_FUNCS X8(1) X8(2) X8(3) X8(4) X8(5) X8(6) X8(7) X8(8)
#define WL_LAZY_MAX 64

#endif /* STK_WL_LAZY_H */
