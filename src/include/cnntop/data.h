/*
 * data.h: what a front end says about the data: where it is, how it is augmented.
 */
#ifndef CNNTOP_DATA_H
#define CNNTOP_DATA_H

#ifdef __cplusplus
extern "C" {
#endif

/* The directory of Debian's dataset-fashion-mnist package. */
#define CN_DEFAULT_DATA_DIR "/usr/share/datasets/fashion-mnist"

/* Augmentations (RunConfig.augment, a bit set), applied by the loader. */
enum {
    CN_AUG_SHIFT = 1,   /* random translation by up to 2 px in x and y */
    CN_AUG_ROTATE = 2,  /* random rotation by up to 15 degrees, bilinear */
    CN_AUG_ELASTIC = 4  /* elastic distortion (Simard et al. 2003) */
};

#ifdef __cplusplus
}
#endif
#endif
